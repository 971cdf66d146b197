"""Java/librdkafka properties -> client keywords: conversions, the shared client options,
security settings, and the errors a wrong property gets."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from krafka.config import OptionTable, keywords_from_config, table
from krafka.config.client import CLIENT
from krafka.config.options import integer, millis
from krafka.errors import ConfigError
from krafka.io.oauth import ClientCredentialsProvider, UnsecuredJwtProvider
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.secret import Secret


def test_producer_and_client_options_in_java_and_librdkafka_spelling() -> None:
    got = keywords_from_config(
        {
            "bootstrap.servers": "a:1,b:2",
            "client.id": "app",
            "request.timeout.ms": "15000",
            "metadata.max.age.ms": 60000,
            "metadata.max.idle.ms": "120000",
            "metadata.recovery.strategy": "none",
            "socket.connection.setup.timeout.ms": 5000,
            "connections.max.idle.ms": 540000,
            "allow.auto.create.topics": "false",
            "linger.ms": "5",
            "queue.buffering.max.kbytes": "1024",
            "compression.codec": "zstd",
            "compression.zstd.level": "7",
            "compression.gzip.level": 3,
            "acks": "-1",
            "enable.idempotence": "true",
            "max.in.flight": "5",
            "message.timeout.ms": 30000,
            "partitioner": "murmur2_random",
            "transactional.id": "",
        },
        "producer",
    )
    assert got == {
        "bootstrap_servers": "a:1,b:2",
        "client_id": "app",
        "request_timeout": 15.0,
        "metadata_max_age": 60.0,
        "metadata_topic_idle_ttl": 120.0,
        "metadata_recovery_strategy": "none",
        "connect_timeout": 5.0,
        "connections_max_idle": 540.0,
        "allow_auto_topic_creation": False,
        "linger": 0.005,
        "buffer_memory": 1024 * 1024,
        "compression": "zstd",
        "compression_level": 7,
        "acks": "all",
        "enable_idempotence": True,
        "max_in_flight_requests_per_connection": 5,
        "delivery_timeout": 30.0,
        "partitioner": "murmur2_random",
        "transactional_id": None,
    }


def test_reconnect_backoff_properties_make_one_policy() -> None:
    got = keywords_from_config(
        {"reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": "1000"}, "client"
    )
    assert got == {"reconnect_backoff": BackoffPolicy(0.05, 1.0)}


def test_an_unknown_property_names_the_closest_valid_one() -> None:
    with pytest.raises(
        ConfigError, match=r"'bootstrap\.server' \(did you mean 'bootstrap\.servers'"
    ):
        keywords_from_config({"bootstrap.server": "a:1"}, "producer")
    with pytest.raises(ConfigError, match=r"'lingr\.ms' \(did you mean 'linger\.ms'"):
        keywords_from_config({"lingr.ms": 5}, "producer")
    with pytest.raises(ConfigError, match=r"unknown property 'zzz'$"):
        keywords_from_config({"zzz": 1}, "producer")
    with pytest.raises(ConfigError, match=r"did you mean 'bootstrap\.servers'"):
        keywords_from_config({"bootstrap_servers": "a:1"}, "client")  # a keyword, not a property


def test_bad_values_and_contradictions_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"linger\.ms: cannot use 'soon'"):
        keywords_from_config({"linger.ms": "soon"}, "producer")
    with pytest.raises(ConfigError, match=r"enable\.idempotence: .*true or false"):
        keywords_from_config({"enable.idempotence": "yes"}, "producer")
    with pytest.raises(ConfigError, match=r"linger\.ms and queue\.buffering\.max\.ms both"):
        keywords_from_config({"linger.ms": 5, "queue.buffering.max.ms": 10}, "producer")
    assert keywords_from_config({"linger.ms": 5, "queue.buffering.max.ms": "5"}, "producer") == {
        "linger": 0.005
    }
    with pytest.raises(ConfigError, match="GSSAPI"):
        keywords_from_config({"sasl.kerberos.service.name": "kafka"}, "producer")
    with pytest.raises(ConfigError, match="await the handle"):
        keywords_from_config({"on_delivery": print}, "producer")
    with pytest.raises(ConfigError, match="no configuration table for 'nothing'"):
        keywords_from_config({}, "nothing")


def test_properties_without_effect_are_accepted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    config = {
        "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
        "client.dns.lookup": "use_all_dns_ips",
    }
    assert keywords_from_config(config, "producer") == {}
    assert "key.serializer has no effect: keys are bytes" in caplog.text


def test_another_client_kind_registers_its_table() -> None:
    consumer = table(
        "test-consumer",
        {"group.id": ("group_id", str), "max.poll.records": ("max_poll_records", integer),
         "session.timeout.ms": ("session_timeout", millis)},
        base=CLIENT,
        ignored={"key.deserializer": "keys are bytes"},
    )  # fmt: skip
    assert isinstance(consumer, OptionTable)
    config = {"bootstrap.servers": "a:1", "group.id": "g", "session.timeout.ms": "45000",
              "key.deserializer": "x", "max.poll.records": "500"}  # fmt: skip
    expected = {"bootstrap_servers": "a:1", "group_id": "g", "session_timeout": 45.0,
                "max_poll_records": 500}  # fmt: skip
    assert keywords_from_config(config, consumer) == expected
    assert keywords_from_config(config, "test-consumer") == expected
    with pytest.raises(ConfigError, match=r"did you mean 'group\.id'"):
        keywords_from_config({"group.ib": "g"}, consumer)
    with pytest.raises(ConfigError, match=r"unknown property 'group\.id'"):
        keywords_from_config({"group.id": "g"}, "producer")


# -- security -------------------------------------------------------------------------------------


def test_tls_material_needs_a_tls_security_protocol(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ssl_ca\) given but security\.protocol is PLAINTEXT"):
        keywords_from_config({"ssl.ca.location": str(tmp_path / "ca.pem")}, "client")
    with pytest.raises(ConfigError, match=r"security\.protocol is SSL: set it to SASL"):
        keywords_from_config({"security.protocol": "SSL", "sasl.username": "u"}, "client")
    with pytest.raises(ConfigError, match=r"needs sasl\.mechanism"):
        keywords_from_config({"security.protocol": "SASL_PLAINTEXT"}, "client")
    with pytest.raises(ConfigError, match="GSSAPI"):
        keywords_from_config(
            {"security.protocol": "sasl_plaintext", "sasl.mechanism": "GSSAPI"}, "client"
        )
    got = keywords_from_config(
        {"security.protocol": "PLAINTEXT", "ssl.endpoint.identification.algorithm": "https"},
        "client",
    )
    assert got == {}  # harmless TLS tuning next to PLAINTEXT (Java configs carry defaults)


def test_sasl_from_jaas_config_and_librdkafka_names() -> None:
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="p@ss \\"word\\"";'
    )
    got = keywords_from_config(
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "scram-sha-512",
         "sasl.jaas.config": jaas},
        "client",
    )  # fmt: skip
    assert got == {
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": "alice",
        "sasl_password": Secret('p@ss "word"'),
    }
    got = keywords_from_config(
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN",
         "sasl.username": "bob", "sasl.password": "pw"},
        "client",
    )  # fmt: skip
    assert got == {"sasl_mechanism": "PLAIN", "sasl_username": "bob", "sasl_password": Secret("pw")}


def test_a_delegation_token_from_jaas_config() -> None:
    base = {"security.protocol": "SASL_SSL", "ssl.endpoint.identification.algorithm": ""}
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="tok-1" password="aG1hYw==" tokenauth="true";'
    )
    got = keywords_from_config(
        {**base, "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": jaas}, "client"
    )
    assert got["sasl_scram_token_auth"] is True and got["sasl_username"] == "tok-1"
    with pytest.raises(ConfigError, match="SCRAM"):
        keywords_from_config(
            {**base, "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas}, "client"
        )
    with pytest.raises(ConfigError, match="tokenauth"):
        keywords_from_config(
            {**base, "sasl.mechanism": "SCRAM-SHA-256",
             "sasl.jaas.config": jaas.replace('"true"', '"yes"')},
            "client",
        )  # fmt: skip


def test_oauthbearer_properties_make_token_providers() -> None:
    base = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER"}
    oidc = keywords_from_config(
        {**base, "sasl.oauthbearer.method": "oidc",
         "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
         "sasl.oauthbearer.client.id": "app", "sasl.oauthbearer.client.secret": "s3cret",
         "sasl.oauthbearer.scope": "kafka", "sasl.oauthbearer.extensions": "logicalCluster=lc-1"},
        "client",
    )["sasl_oauth_token_provider"]  # fmt: skip
    assert isinstance(oidc, ClientCredentialsProvider)
    assert (oidc.client_id, oidc.scope, oidc.extensions) == (
        "app",
        "kafka",
        {"logicalCluster": "lc-1"},
    )
    assert "s3cret" not in repr(oidc)
    unsecured = keywords_from_config(
        {**base, "enable.sasl.oauthbearer.unsecure.jwt": "true",
         "sasl.oauthbearer.config": "principal=admin scope=a,b extension_trace=1"},
        "client",
    )["sasl_oauth_token_provider"]  # fmt: skip
    assert isinstance(unsecured, UnsecuredJwtProvider)
    token = unsecured()
    assert token.principal == "admin" and token.extensions == {"trace": "1"}
    java = keywords_from_config(
        {**base, "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer."
         'OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="carol";'},
        "client",
    )["sasl_oauth_token_provider"]  # fmt: skip
    assert java().principal == "carol"
    confluent = keywords_from_config(
        {**base, "oauth_cb": lambda config: ("tok", 1_700_000_000.5)}, "client"
    )["sasl_oauth_token_provider"]
    assert confluent().value == Secret("tok") and confluent().lifetime_ms == 1_700_000_000_500


def test_secrets_never_appear_in_errors() -> None:
    with pytest.raises(ConfigError) as info:
        keywords_from_config(
            {"security.protocol": "SSL", "sasl.password": "hunter2-secret"}, "client"
        )
    assert "hunter2" not in str(info.value)
    with pytest.raises(ConfigError) as info:
        keywords_from_config({"sasl.password": 12345678}, "client")
    assert "12345678" not in str(info.value)
