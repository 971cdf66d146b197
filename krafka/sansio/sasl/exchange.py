"""The Kafka side of SASL: SaslHandshake (v1+) then SaslAuthenticate rounds (KIP-152).

`SaslExchange` knows which Kafka request to send next and what a response means; the
mechanism (PLAIN, SCRAM, OAUTHBEARER) knows the bytes. The connection state machine runs it
for the first authentication and for every KIP-368 re-authentication.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from krafka.errors import AuthenticationError, UnsupportedSaslMechanismError, error_for_code
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from krafka.sansio.sasl.mechanism import SaslMechanism


class SaslStep(Enum):
    HANDSHAKE = 1
    AUTHENTICATE = 2
    DONE = 3
    FAILED = 4


class SaslExchange:
    """Drives one mechanism through Kafka's SASL requests."""

    __slots__ = ("mechanism", "session_lifetime_ms", "step")

    def __init__(self, mechanism: SaslMechanism) -> None:
        self.mechanism = mechanism
        self.step = SaslStep.HANDSHAKE
        self.session_lifetime_ms = 0

    def first_request(self) -> SaslHandshakeRequest:
        return SaslHandshakeRequest(mechanism=self.mechanism.name)

    def on_response(self, response: Any) -> Any | None:
        """The next request to send, or None once authenticated; raises AuthenticationError."""
        try:
            if self.step is SaslStep.HANDSHAKE:
                return self._on_handshake(response)
            if self.step is SaslStep.AUTHENTICATE:
                return self._on_authenticate(response)
        except AuthenticationError:
            self.step = SaslStep.FAILED
            raise
        raise AuthenticationError(f"SASL: response in state {self.step.name}")

    def _on_handshake(self, response: SaslHandshakeResponse) -> SaslAuthenticateRequest:
        if response.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM:
            offered = ", ".join(response.mechanisms or ())
            raise UnsupportedSaslMechanismError(
                f"SASL mechanism {self.mechanism.name} not enabled on the broker "
                f"(it offers: {offered})"
            )
        if response.error_code != ErrorCode.NONE:
            raise _refusal(
                response.error_code, f"SaslHandshake failed with error code {response.error_code}"
            )
        self.step = SaslStep.AUTHENTICATE
        return SaslAuthenticateRequest(auth_bytes=self.mechanism.initial_response())

    def _on_authenticate(
        self, response: SaslAuthenticateResponse
    ) -> SaslAuthenticateRequest | None:
        if response.error_code != ErrorCode.NONE:
            detail = response.error_message or f"error code {response.error_code}"
            raise _refusal(
                response.error_code, f"SASL {self.mechanism.name} authentication failed: {detail}"
            )
        reply = self.mechanism.respond(bytes(response.auth_bytes or b""))
        if reply is not None:
            return SaslAuthenticateRequest(auth_bytes=reply)
        if not self.mechanism.complete:
            raise AuthenticationError(f"SASL {self.mechanism.name} exchange did not complete")
        self.session_lifetime_ms = int(getattr(response, "session_lifetime_ms", 0) or 0)
        self.step = SaslStep.DONE
        return None


def _refusal(code: int, message: str) -> AuthenticationError:
    """The broker's code as its `AuthenticationError` subclass (SaslAuthenticationError for
    SASL_AUTHENTICATION_FAILED ...), plain `AuthenticationError` for any other code."""
    error = error_for_code(code, message)
    return error if isinstance(error, AuthenticationError) else AuthenticationError(message)
