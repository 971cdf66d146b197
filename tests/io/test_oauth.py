"""The OAuth 2 client-credentials token provider against a real HTTP token endpoint."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _token_endpoint import TokenEndpoint

from krafka.errors import AuthenticationError
from krafka.io.oauth import ClientCredentialsProvider
from krafka.sansio.secret import Secret


@pytest.fixture
def token_endpoint() -> Iterator[TokenEndpoint]:
    with TokenEndpoint() as endpoint:
        yield endpoint


def test_tokens_are_fetched_with_client_credentials_and_renewed_near_expiry(
    token_endpoint: TokenEndpoint,
) -> None:
    now = [1000.0]
    provider = ClientCredentialsProvider(
        token_endpoint.url, "app", "s3cret", scope="kafka", clock=lambda: now[0]
    )
    first = provider()
    assert first.value == Secret("token-1") and first.lifetime_ms == 1_100_000
    assert token_endpoint.requests == [
        {"form": {"grant_type": "client_credentials", "scope": "kafka"}, "auth": b"app:s3cret"}
    ]
    now[0] += 79  # reused until 80 % of its 100 s lifetime
    assert provider() is first
    now[0] += 2
    assert provider().value == Secret("token-2")


def test_refused_credentials_are_an_authentication_error_without_the_secret(
    token_endpoint: TokenEndpoint,
) -> None:
    provider = ClientCredentialsProvider(token_endpoint.url, "app", "wrong-secret")
    with pytest.raises(AuthenticationError, match="HTTP 401") as info:
        provider()
    assert "wrong-secret" not in str(info.value) and "wrong-secret" not in repr(provider)
