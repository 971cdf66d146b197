"""SASL SCRAM-SHA-256 / SCRAM-SHA-512 client (RFC 5802, RFC 7677), as Kafka speaks it.

The exchange is client-first, server-first, client-final, server-final. The server's
signature is verified with `hmac.compare_digest`; the iteration count is bounded both ways
(too low is a downgrade, too high a CPU denial of service). Nothing secret is kept in a form
that repr or an exception could show.

Extensions (RFC 5802's extension attributes, Kafka's `ScramExtensions`) go at the end of the
client-first message: `tokenauth=true` logs in with a delegation token (KIP-48), the token id
as user name and its HMAC in base64 as password.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from enum import Enum
from typing import Final

from krafka.errors import AuthenticationError
from krafka.sansio.secret import Secret, as_secret

MIN_ITERATIONS: Final = 4096
DEFAULT_MAX_ITERATIONS: Final = 100_000
_GS2_HEADER: Final = "n,,"
#: The extension that makes the broker check a delegation token instead of a user.
TOKEN_AUTH: Final[Mapping[str, str]] = {"tokenauth": "true"}
_EXTENSION_KEY: Final = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


class ScramHash(Enum):
    """The hash a SCRAM mechanism is named for."""

    SHA1 = ("SCRAM-SHA-1", "sha1")
    SHA256 = ("SCRAM-SHA-256", "sha256")
    SHA512 = ("SCRAM-SHA-512", "sha512")

    @property
    def mechanism(self) -> str:
        return self.value[0]

    @property
    def digest(self) -> str:
        return self.value[1]


class _Step(Enum):
    START = 0
    SENT_FIRST = 1
    SENT_FINAL = 2
    DONE = 3
    FAILED = 4


def salted_password(hash: ScramHash, password: Secret, salt: bytes, iterations: int) -> bytes:
    """SaltedPassword := Hi(Normalize(password), salt, i) (RFC 5802): what a client proves it
    knows, and what a broker stores for a SCRAM user."""
    return hashlib.pbkdf2_hmac(hash.digest, password.reveal_bytes(), salt, iterations)


def _saslname(username: str) -> str:
    return username.replace("=", "=3D").replace(",", "=2C")


def _extensions(extensions: Mapping[str, str]) -> str:
    """`,key=value` per extension; keys are letters and digits, values have no `,` or `=`."""
    out = ""
    for key, value in extensions.items():
        if len(key) == 1 or not _EXTENSION_KEY.match(key) or "," in value or "=" in value:
            raise ValueError(f"invalid SCRAM extension {key!r}")
        out += f",{key}={value}"
    return out


def _attributes(message: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise AuthenticationError(f"SCRAM: malformed server message attribute {key[:8]!r}")
        attrs.setdefault(key, value)
    return attrs


def _b64decode(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise AuthenticationError(f"SCRAM: {what} is not valid base64") from None


class ScramMechanism:
    """One SCRAM exchange. `nonce` is for test vectors only; by default 24 random bytes.
    `extensions` are sent in the client-first message (`TOKEN_AUTH` for a delegation token)."""

    __slots__ = (
        "_auth_message",
        "_client_first_bare",
        "_extensions",
        "_hash",
        "_nonce",
        "_password",
        "_salted",
        "_step",
        "max_iterations",
        "min_iterations",
        "username",
    )

    def __init__(
        self,
        username: str,
        password: str | Secret,
        hash: ScramHash = ScramHash.SHA256,
        *,
        nonce: str | None = None,
        min_iterations: int = MIN_ITERATIONS,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        extensions: Mapping[str, str] | None = None,
    ) -> None:
        self.username = username
        self._extensions = _extensions(extensions or {})
        self._password = as_secret(password)
        self._hash = hash
        self._nonce = nonce or base64.b64encode(secrets.token_bytes(24)).decode()
        self.min_iterations = min_iterations
        self.max_iterations = max_iterations
        self._client_first_bare = ""
        self._auth_message = b""
        self._salted = b""
        self._step = _Step.START

    def __repr__(self) -> str:
        return f"ScramMechanism({self.name}, username={self.username!r}, password=Secret('******'))"

    @property
    def name(self) -> str:
        return self._hash.mechanism

    @property
    def complete(self) -> bool:
        return self._step is _Step.DONE

    def initial_response(self) -> bytes:
        self._expect(_Step.START)
        self._client_first_bare = f"n={_saslname(self.username)},r={self._nonce}{self._extensions}"
        self._step = _Step.SENT_FIRST
        return (_GS2_HEADER + self._client_first_bare).encode()

    def respond(self, challenge: bytes) -> bytes | None:
        try:
            message = challenge.decode()
        except UnicodeDecodeError:
            self._step = _Step.FAILED
            raise AuthenticationError("SCRAM: server message is not UTF-8") from None
        if self._step is _Step.SENT_FIRST:
            return self._client_final(message)
        self._expect(_Step.SENT_FINAL)
        self._verify_server_final(message)
        return None

    def _expect(self, step: _Step) -> None:
        if self._step is not step:
            raise AuthenticationError(f"SCRAM: unexpected message in state {self._step.name}")

    def _hmac(self, key: bytes, msg: bytes) -> bytes:
        return hmac.new(key, msg, self._hash.digest).digest()

    def _client_final(self, server_first: str) -> bytes:
        self._step = _Step.FAILED
        attrs = _attributes(server_first)
        if "m" in attrs:
            raise AuthenticationError("SCRAM: server requires an unsupported extension")
        nonce, salt_b64, iterations_text = attrs.get("r"), attrs.get("s"), attrs.get("i")
        if nonce is None or salt_b64 is None or iterations_text is None:
            raise AuthenticationError("SCRAM: server-first message lacks r, s or i")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise AuthenticationError("SCRAM: server nonce does not extend the client nonce")
        iterations = self._iterations(iterations_text)
        salt = _b64decode(salt_b64, "salt")
        self._salted = salted_password(self._hash, self._password, salt, iterations)
        without_proof = f"c={base64.b64encode(_GS2_HEADER.encode()).decode()},r={nonce}"
        self._auth_message = ",".join(
            (self._client_first_bare, server_first, without_proof)
        ).encode()
        client_key = self._hmac(self._salted, b"Client Key")
        stored_key = hashlib.new(self._hash.digest, client_key).digest()
        signature = self._hmac(stored_key, self._auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._step = _Step.SENT_FINAL
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _iterations(self, text: str) -> int:
        if not text.isdigit() or len(text) > 10:
            raise AuthenticationError("SCRAM: iteration count is not a number")
        iterations = int(text)
        if not self.min_iterations <= iterations <= self.max_iterations:
            raise AuthenticationError(
                f"SCRAM: iteration count {iterations} outside the accepted range "
                f"{self.min_iterations}..{self.max_iterations}"
            )
        return iterations

    def _verify_server_final(self, server_final: str) -> None:
        self._step = _Step.FAILED
        attrs = _attributes(server_final)
        if "e" in attrs:
            raise AuthenticationError(f"SCRAM: server rejected authentication: {attrs['e'][:100]}")
        if "v" not in attrs:
            raise AuthenticationError("SCRAM: server-final message lacks a signature")
        server_key = self._hmac(self._salted, b"Server Key")
        expected = self._hmac(server_key, self._auth_message)
        if not hmac.compare_digest(expected, _b64decode(attrs["v"], "server signature")):
            raise AuthenticationError("SCRAM: server signature verification failed")
        self._step = _Step.DONE
