"""Build a SASL mechanism factory from Kafka-style settings (`sasl.mechanism` and friends)."""

from __future__ import annotations

from collections.abc import Callable

from krafka.errors import ConfigError
from krafka.sansio.sasl.mechanism import SaslMechanism
from krafka.sansio.sasl.oauthbearer import OAuthBearerMechanism, TokenProvider
from krafka.sansio.sasl.plain import PlainMechanism
from krafka.sansio.sasl.scram import ScramHash, ScramMechanism
from krafka.sansio.secret import Secret, as_secret

MechanismFactory = Callable[[], SaslMechanism]
_SCRAM = {"SCRAM-SHA-256": ScramHash.SHA256, "SCRAM-SHA-512": ScramHash.SHA512}


def mechanism_factory(
    mechanism: str,
    *,
    username: str | None = None,
    password: str | Secret | None = None,
    token_provider: TokenProvider | None = None,
) -> MechanismFactory:
    """A callable making a fresh mechanism per (re-)authentication; raises `ConfigError`."""
    name = mechanism.upper()
    if name == "OAUTHBEARER":
        if token_provider is None:
            raise ConfigError("sasl_mechanism OAUTHBEARER needs sasl_oauth_token_provider")
        provider = token_provider
        return lambda: OAuthBearerMechanism(provider)
    if username is None or password is None:
        raise ConfigError(f"sasl_mechanism {name} needs sasl_username and sasl_password")
    user, secret = username, as_secret(password)
    if name == "PLAIN":
        return lambda: PlainMechanism(user, secret)
    if name in _SCRAM:
        hash_ = _SCRAM[name]
        return lambda: ScramMechanism(user, secret, hash_)
    raise ConfigError(
        f"unsupported sasl_mechanism {mechanism!r} (PLAIN, SCRAM-SHA-256, "
        "SCRAM-SHA-512, OAUTHBEARER)"
    )
