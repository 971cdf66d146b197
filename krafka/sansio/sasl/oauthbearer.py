"""SASL OAUTHBEARER (RFC 7628, KIP-255) with a token-provider callback.

The provider is called once per (re-)authentication, so a provider that caches and refreshes
its token gives every re-authentication (KIP-368) a fresh one. It is a plain callable: a
driver that must fetch tokens asynchronously fetches first and passes a callable returning it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from krafka.errors import AuthenticationError
from krafka.sansio.secret import Secret, as_secret

_EXT_KEY = re.compile(r"^[A-Za-z]+$")
_EXT_VALUE = re.compile(r"^[\x21-\x7E \t\r\n]+$")


@dataclass(frozen=True, slots=True)
class OAuthBearerToken:
    """A bearer token (masked in repr) with optional lifetime and SASL extensions."""

    value: Secret
    lifetime_ms: int | None = None
    principal: str | None = None
    extensions: Mapping[str, str] = field(default_factory=dict)

    def __init__(
        self,
        value: str | Secret,
        lifetime_ms: int | None = None,
        principal: str | None = None,
        extensions: Mapping[str, str] | None = None,
    ) -> None:
        object.__setattr__(self, "value", as_secret(value))
        object.__setattr__(self, "lifetime_ms", lifetime_ms)
        object.__setattr__(self, "principal", principal)
        object.__setattr__(self, "extensions", dict(extensions or {}))


TokenProvider = Callable[[], OAuthBearerToken]


def _extensions(extensions: Mapping[str, str]) -> bytes:
    out = b""
    for key, value in extensions.items():
        if key == "auth" or not _EXT_KEY.match(key) or not _EXT_VALUE.match(value):
            raise ValueError(f"invalid OAUTHBEARER extension {key!r}")
        out += f"{key}={value}\x01".encode()
    return out


class OAuthBearerMechanism:
    """Sends `n,,^Aauth=Bearer <token>^A<extensions>^A`; a server error challenge is answered
    with the single `^A` RFC 7628 requires, then the exchange fails."""

    __slots__ = ("_complete", "_failed", "_provider", "_sent")

    def __init__(self, token_provider: TokenProvider) -> None:
        self._provider = token_provider
        self._sent = False
        self._failed = False
        self._complete = False

    def __repr__(self) -> str:
        return "OAuthBearerMechanism()"

    @property
    def name(self) -> str:
        return "OAUTHBEARER"

    @property
    def complete(self) -> bool:
        return self._complete

    def initial_response(self) -> bytes:
        token = self._provider()
        if not isinstance(token, OAuthBearerToken):
            raise AuthenticationError("OAUTHBEARER token provider returned no OAuthBearerToken")
        self._sent = True
        bearer = token.value.reveal_bytes()
        return b"n,,\x01auth=Bearer " + bearer + b"\x01" + _extensions(token.extensions) + b"\x01"

    def respond(self, challenge: bytes) -> bytes | None:
        if not self._sent or self._failed:
            raise AuthenticationError("OAUTHBEARER: unexpected server message")
        if challenge:
            self._failed = True
            return b"\x01"
        self._complete = True
        return None
