"""Build a SASL mechanism factory from Kafka-style settings (`sasl.mechanism` and friends)."""

from __future__ import annotations

from collections.abc import Callable

from krafka.errors import ConfigError
from krafka.sansio.sasl.mechanism import SaslMechanism
from krafka.sansio.sasl.oauthbearer import OAuthBearerMechanism, TokenProvider
from krafka.sansio.sasl.plain import PlainMechanism
from krafka.sansio.sasl.scram import TOKEN_AUTH, ScramHash, ScramMechanism
from krafka.sansio.secret import Secret, as_secret

MechanismFactory = Callable[[], SaslMechanism]
_SCRAM = {"SCRAM-SHA-256": ScramHash.SHA256, "SCRAM-SHA-512": ScramHash.SHA512}


def mechanism_factory(
    mechanism: str,
    *,
    username: str | None = None,
    password: str | Secret | None = None,
    token_provider: TokenProvider | None = None,
    scram_token_auth: bool = False,
) -> MechanismFactory:
    """A callable making a fresh mechanism per (re-)authentication; raises `ConfigError`.
    `scram_token_auth` logs in with a delegation token (SCRAM with `tokenauth=true`)."""
    name = mechanism.upper()
    if scram_token_auth and name not in _SCRAM:
        raise ConfigError(f"delegation tokens log in with SCRAM-SHA-256/512, not {name}")
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
        extensions = TOKEN_AUTH if scram_token_auth else None
        return lambda: ScramMechanism(user, secret, hash_, extensions=extensions)
    raise ConfigError(
        f"unsupported sasl_mechanism {mechanism!r} (PLAIN, SCRAM-SHA-256, "
        "SCRAM-SHA-512, OAUTHBEARER)"
    )
