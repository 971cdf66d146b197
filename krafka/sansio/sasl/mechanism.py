"""The interface every SASL mechanism implements: bytes in, bytes out, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable


@runtime_checkable
class SaslMechanism(Protocol):
    """One authentication exchange (a fresh instance per (re-)authentication).

    `initial_response()` is the first client message; each server message goes to `respond()`,
    which returns the next client message or None once the exchange is complete. A mechanism
    raises `krafka.errors.AuthenticationError` (never echoing a secret) when the server's
    message is invalid or fails verification.
    """

    @property
    def name(self) -> str:
        """The SASL mechanism name sent in SaslHandshake, e.g. "SCRAM-SHA-256"."""
        ...

    @property
    def complete(self) -> bool:
        """True once the exchange succeeded from the client's point of view."""
        ...

    def initial_response(self) -> bytes: ...

    def respond(self, challenge: bytes) -> bytes | None: ...


@runtime_checkable
class ServerBoundFactory(Protocol):
    """A mechanism factory that must know which broker it authenticates to (AWS_MSK_IAM signs
    the broker's host name): each connection calls `for_server(host)` for its own factory."""

    def for_server(self, host: str) -> Callable[[], SaslMechanism]: ...
