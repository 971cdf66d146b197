"""SASL PLAIN (RFC 4616): one message carrying the username and password in the clear."""

from __future__ import annotations

from krafka.errors import AuthenticationError
from krafka.sansio.secret import Secret, as_secret


class PlainMechanism:
    """SASL/PLAIN; use it only over TLS."""

    __slots__ = ("_complete", "_password", "_sent", "authzid", "username")

    def __init__(self, username: str, password: str | Secret, authzid: str = "") -> None:
        if "\0" in username or "\0" in authzid:
            raise ValueError("PLAIN username/authzid must not contain NUL")
        self.username = username
        self.authzid = authzid
        self._password = as_secret(password)
        self._sent = False
        self._complete = False

    def __repr__(self) -> str:
        return f"PlainMechanism(username={self.username!r}, password=Secret('******'))"

    @property
    def name(self) -> str:
        return "PLAIN"

    @property
    def complete(self) -> bool:
        return self._complete

    def initial_response(self) -> bytes:
        self._sent = True
        return b"\0".join(
            (self.authzid.encode(), self.username.encode(), self._password.reveal_bytes())
        )

    def respond(self, challenge: bytes) -> bytes | None:
        if not self._sent:
            raise AuthenticationError("PLAIN: server message before the client's")
        if challenge:
            raise AuthenticationError("PLAIN: unexpected server challenge")
        self._complete = True
        return None
