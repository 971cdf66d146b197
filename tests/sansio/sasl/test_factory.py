from __future__ import annotations

import pytest

from krafka.errors import ConfigError
from krafka.sansio.sasl import OAuthBearerToken, mechanism_factory


@pytest.mark.parametrize("name", ["PLAIN", "SCRAM-SHA-256", "scram-sha-512"])
def test_password_mechanisms(name: str) -> None:
    factory = mechanism_factory(name, username="u", password="hunter2")
    first, second = factory(), factory()
    assert first is not second and first.name == name.upper()
    assert "hunter2" not in repr(first)


def test_oauthbearer_needs_a_provider() -> None:
    with pytest.raises(ConfigError):
        mechanism_factory("OAUTHBEARER")
    factory = mechanism_factory("OAUTHBEARER", token_provider=lambda: OAuthBearerToken("t"))
    assert factory().name == "OAUTHBEARER"


def test_unknown_or_incomplete_settings() -> None:
    with pytest.raises(ConfigError, match="GSSAPI"):
        mechanism_factory("GSSAPI", username="u", password="p")
    with pytest.raises(ConfigError, match="sasl_password"):
        mechanism_factory("PLAIN", username="u")


def test_scram_token_auth() -> None:
    mechanism = mechanism_factory(
        "SCRAM-SHA-512", username="tok", password="hmac", scram_token_auth=True
    )()
    assert mechanism.initial_response().endswith(b",tokenauth=true")
    with pytest.raises(ConfigError, match="SCRAM"):
        mechanism_factory("PLAIN", username="tok", password="hmac", scram_token_auth=True)
