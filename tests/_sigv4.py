"""An independent check of AWS_MSK_IAM payloads: AWS Signature Version 4 for a presigned
`GET https://HOST/?Action=kafka-cluster%3AConnect&X-Amz-...` request, written from AWS's
published algorithm with hashlib/hmac only (no botocore), as an MSK broker verifies it."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any
from urllib.parse import quote

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _sign(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def expected_signature(payload: dict[str, str], secret_key: str) -> str:
    """The signature an MSK broker computes for the payload's fields with `secret_key`."""
    query = {
        "Action": payload["action"],
        "X-Amz-Algorithm": payload["x-amz-algorithm"],
        "X-Amz-Credential": payload["x-amz-credential"],
        "X-Amz-Date": payload["x-amz-date"],
        "X-Amz-Expires": payload["x-amz-expires"],
        "X-Amz-SignedHeaders": payload["x-amz-signedheaders"],
    }
    if "x-amz-security-token" in payload:
        query["X-Amz-Security-Token"] = payload["x-amz-security-token"]
    canonical_query = "&".join(
        f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(query.items())
    )
    canonical_request = "\n".join(
        ["GET", "/", canonical_query, f"host:{payload['host']}\n", "host", EMPTY_SHA256]
    )
    _, date, region, service, terminal = payload["x-amz-credential"].split("/")
    scope = f"{date}/{region}/{service}/{terminal}"
    string_to_sign = "\n".join(
        [
            "AWS4-HMAC-SHA256",
            payload["x-amz-date"],
            scope,
            hashlib.sha256(canonical_request.encode()).hexdigest(),
        ]
    )
    key = _sign(f"AWS4{secret_key}".encode(), date)
    for part in (region, service, terminal):
        key = _sign(key, part)
    return hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()


def verify(raw: bytes, secret_key: str) -> dict[str, Any]:
    """The payload's fields, after checking its shape and signature (AssertionError if not)."""
    payload = json.loads(raw)
    assert payload["version"] == "2020_10_22"
    assert payload["action"] == "kafka-cluster:Connect"
    assert payload["x-amz-algorithm"] == "AWS4-HMAC-SHA256"
    assert payload["x-amz-signedheaders"] == "host"
    assert payload["x-amz-credential"].split("/")[3:] == ["kafka-cluster", "aws4_request"]
    assert hmac.compare_digest(payload["x-amz-signature"], expected_signature(payload, secret_key))
    return dict(payload)
