"""SASL AWS_MSK_IAM: Amazon MSK's IAM access control, as Amazon's `aws-msk-iam-auth` speaks it.

The client sends one message: a JSON object holding a SigV4 presigned `kafka-cluster:Connect`
request for the broker's host (service `kafka-cluster`, valid 900 s) — `version`
(`2020_10_22`), `host`, `user-agent`, `action` and the presigned query parameters in lower case
(`x-amz-algorithm`, `x-amz-credential`, `x-amz-date`, `x-amz-expires`, `x-amz-signedheaders`,
`x-amz-signature`, and `x-amz-security-token` with temporary credentials). The broker answers
`{"version": "2020_10_22", "request-id": "..."}`.

Signing is botocore's (`SigV4QueryAuth`, imported when first needed: `pip install
'krafka[aws]'`), at an explicit time. The keys are written in the order Amazon's Java library
writes them (its `HashMap`'s), so the payload is byte for byte the one it sends.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

from krafka.errors import AuthenticationError, ConfigError
from krafka.sansio.secret import Secret, as_secret

MECHANISM: Final = "AWS_MSK_IAM"
VERSION: Final = "2020_10_22"
ACTION: Final = "kafka-cluster:Connect"
SERVICE: Final = "kafka-cluster"
#: How long a signature stays valid (the Java library's 15 minutes).
EXPIRES: Final = 900
INSTALL_HINT: Final = "AWS_MSK_IAM needs botocore: pip install 'krafka[aws]'"
_KEY_ORDER: Final = (
    "x-amz-date",
    "x-amz-signedheaders",
    "x-amz-signature",
    "host",
    "action",
    "x-amz-expires",
    "x-amz-security-token",
    "version",
    "x-amz-algorithm",
    "x-amz-credential",
    "user-agent",
)


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    """An access key with its secret (and session token, for temporary credentials)."""

    access_key: str
    secret_key: Secret = field(repr=False)
    session_token: Secret | None = field(default=None, repr=False)

    def __init__(
        self,
        access_key: str,
        secret_key: str | Secret,
        session_token: str | Secret | None = None,
    ) -> None:
        if not access_key:
            raise ValueError("AWS credentials need an access key")
        object.__setattr__(self, "access_key", access_key)
        object.__setattr__(self, "secret_key", as_secret(secret_key))
        token = None if session_token is None else as_secret(session_token)
        object.__setattr__(self, "session_token", token)


def _botocore() -> tuple[Any, Any, Any]:
    try:
        from botocore.auth import SIGV4_TIMESTAMP, SigV4QueryAuth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None

    class _QueryAuthAt(SigV4QueryAuth):  # type: ignore[misc]
        """botocore's presigning, at a given time instead of the clock's."""

        def __init__(self, credentials: Any, region: str, expires: int, at: datetime) -> None:
            super().__init__(credentials, SERVICE, region, expires=expires)
            self._at = at

        def add_auth(self, request: Any) -> None:
            request.context["timestamp"] = self._at.strftime(SIGV4_TIMESTAMP)
            self._modify_request_before_signing(request)
            canonical = self.canonical_request(request)
            signature = self.signature(self.string_to_sign(request, canonical), request)
            self._inject_signature_to_request(request, signature)

    return _QueryAuthAt, AWSRequest, Credentials


def signed_payload(
    host: str,
    region: str,
    credentials: AwsCredentials,
    *,
    signed_at: datetime,
    user_agent: str,
    expires: int = EXPIRES,
) -> bytes:
    """The AWS_MSK_IAM client message for `host` in `region`, signed at `signed_at` (UTC)."""
    query_auth, aws_request, botocore_credentials = _botocore()
    token = credentials.session_token
    signer = query_auth(
        botocore_credentials(
            credentials.access_key,
            credentials.secret_key.reveal(),
            None if token is None else token.reveal(),
        ),
        region,
        expires,
        signed_at.astimezone(timezone.utc),
    )
    request = aws_request(method="GET", url=f"https://{host}/", params={"Action": ACTION})
    signer.add_auth(request)
    fields = {k.lower(): v for k, v in parse_qsl(urlsplit(request.url).query)}
    fields.update({"host": host, "version": VERSION, "user-agent": user_agent})
    ordered = {key: fields[key] for key in _KEY_ORDER if key in fields}
    return json.dumps(ordered, separators=(",", ":"), ensure_ascii=False).encode()


class MskIamMechanism:
    """One AWS_MSK_IAM exchange; `payload` signs the client message when it is sent."""

    __slots__ = ("_complete", "_payload", "_sent", "request_id")

    def __init__(self, payload: Callable[[], bytes]) -> None:
        self._payload = payload
        self._sent = False
        self._complete = False
        self.request_id: str | None = None

    def __repr__(self) -> str:
        return "MskIamMechanism()"

    @property
    def name(self) -> str:
        return MECHANISM

    @property
    def complete(self) -> bool:
        return self._complete

    def initial_response(self) -> bytes:
        self._sent = True
        return self._payload()

    def respond(self, challenge: bytes) -> bytes | None:
        if not self._sent or self._complete:
            raise AuthenticationError("AWS_MSK_IAM: unexpected server message")
        if not challenge:
            raise AuthenticationError("AWS_MSK_IAM: the broker sent an empty response")
        try:
            answer = json.loads(challenge)
        except ValueError:
            raise AuthenticationError("AWS_MSK_IAM: the broker's response is not JSON") from None
        if not isinstance(answer, dict) or answer.get("version") != VERSION:
            raise AuthenticationError(
                f"AWS_MSK_IAM: the broker answered an unknown version (expected {VERSION})"
            )
        request_id = answer.get("request-id")
        if not isinstance(request_id, str) or not request_id:
            raise AuthenticationError("AWS_MSK_IAM: the broker's response has no request-id")
        self.request_id = request_id
        self._complete = True
        return None


__all__ = [
    "EXPIRES",
    "MECHANISM",
    "VERSION",
    "AwsCredentials",
    "MskIamMechanism",
    "signed_payload",
]
