"""SASL mechanisms (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER, AWS_MSK_IAM), sans-IO.

`krafka.sansio.sasl.exchange.SaslExchange` runs one of them over Kafka's SASL requests.
"""

from krafka.sansio.sasl.factory import MechanismFactory, mechanism_factory
from krafka.sansio.sasl.mechanism import SaslMechanism, ServerBoundFactory
from krafka.sansio.sasl.msk_iam import AwsCredentials, MskIamMechanism
from krafka.sansio.sasl.oauthbearer import OAuthBearerMechanism, OAuthBearerToken, TokenProvider
from krafka.sansio.sasl.plain import PlainMechanism
from krafka.sansio.sasl.scram import ScramHash, ScramMechanism

__all__ = [
    "AwsCredentials",
    "MechanismFactory",
    "MskIamMechanism",
    "OAuthBearerMechanism",
    "OAuthBearerToken",
    "PlainMechanism",
    "SaslMechanism",
    "ScramHash",
    "ScramMechanism",
    "ServerBoundFactory",
    "TokenProvider",
    "mechanism_factory",
]
