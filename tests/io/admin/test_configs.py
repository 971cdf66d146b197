"""Config admin calls against Apache Kafka and Tansu: describe a topic's and a broker's configs,
change them incrementally. (Tansu reports only the configs set on a topic, as DEFAULT_CONFIG,
and closes the connection when asked for named configs: names are checked with scripted
brokers and on Apache Kafka.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from _members import eventually, is_kafka, unique

from krafka import AdminClient, AlterConfigOp, ConfigEntry, ConfigResource, NewTopic, Results
from krafka.errors import (
    ConfigError,
    InvalidConfigError,
    InvalidRequestError,
    UnknownTopicOrPartitionError,
)
from krafka.io.admin.config import admin_keywords
from krafka.sansio.admin.configs import ConfigSource, ConfigType

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def configs_when(
    admin: AdminClient,
    resource: ConfigResource,
    ok: Callable[[dict[str, ConfigEntry]], bool],
    **options: Any,
) -> dict[str, ConfigEntry]:
    """The resource's configs once `ok` holds of them (a change shows eventually)."""

    def described(found: Results[ConfigResource, dict[str, ConfigEntry]]) -> bool:
        entries = found[resource]
        return not isinstance(entries, Exception) and ok(entries)

    found = await eventually(lambda: admin.describe_configs([resource], **options), described)
    return found.raise_for_errors()[resource]


async def test_describe_and_alter_topic_configs(broker: Any) -> None:
    name = unique("adm-cfg")
    topic = ConfigResource.topic(name)
    async with AdminClient(broker.bootstrap_servers) as admin:
        await admin.create_topics([NewTopic(name, 1, configs={"retention.ms": "60000"})])
        await configs_when(admin, topic, lambda e: e["retention.ms"].value == "60000")

        changed = await admin.alter_configs(
            {
                topic: [
                    AlterConfigOp.set("retention.ms", "120000"),
                    AlterConfigOp.set("segment.ms", "3600000"),
                ]
            }
        )
        assert changed[topic] is None
        entries = await configs_when(admin, topic, lambda e: e["retention.ms"].value == "120000")
        assert entries["segment.ms"].value == "3600000"

        await admin.alter_configs({topic: {"segment.ms": None, "cleanup.policy": "compact"}})
        entries = await configs_when(admin, topic, lambda e: e["cleanup.policy"].value == "compact")
        if is_kafka(broker):  # a deleted override falls back to the default, still listed
            segment = entries["segment.ms"]
            assert (segment.value, segment.source) == ("604800000", ConfigSource.DEFAULT_CONFIG)
            assert entries["cleanup.policy"].source is ConfigSource.DYNAMIC_TOPIC_CONFIG
        else:  # Tansu lists only the configs set on the topic
            assert "segment.ms" not in entries


async def test_a_brokers_configs_are_asked_of_it(broker: Any) -> None:
    async with AdminClient(broker.bootstrap_servers) as admin:
        cluster = await admin.describe_cluster()
        resource = ConfigResource.broker(cluster.nodes[0].node_id)
        results = await admin.describe_configs([resource])
        assert isinstance(results[resource], dict)


def test_from_config_reads_java_properties() -> None:
    keywords = admin_keywords(
        {
            "bootstrap.servers": "h:1",
            "client.id": "ops",
            "default.api.timeout.ms": "30000",
            "request.timeout.ms": 5000,
            "retry.backoff.ms": "50",
            "retries": "5",
            "sasl.mechanism": "SCRAM-SHA-512",
            "security.protocol": "SASL_PLAINTEXT",
        }
    )
    assert keywords == {
        "bootstrap_servers": "h:1",
        "client_id": "ops",
        "default_api_timeout": 30.0,
        "request_timeout": 5.0,
        "retry_backoff": 0.05,
        "sasl_mechanism": "SCRAM-SHA-512",
    }
    assert "ssl_context" in admin_keywords({"security.protocol": "SSL"})
    with pytest.raises(ConfigError, match=r"linger\.ms"):
        admin_keywords({"linger.ms": 5})
    admin = AdminClient.from_config({"bootstrap.servers": "h:1", "default.api.timeout.ms": 2500})
    assert admin.default_api_timeout == 2.5


async def test_from_config_client_works(broker: Any) -> None:
    async with AdminClient.from_config({"bootstrap.servers": broker.bootstrap_servers}) as admin:
        assert (await admin.describe_cluster()).nodes


async def test_on_kafka_list_ops_validate_only_and_refusals(kafka: Any) -> None:
    name = unique("adm-kcfg")
    topic = ConfigResource.topic(name)
    async with AdminClient(kafka.bootstrap_servers) as admin:
        await admin.create_topics([NewTopic(name, 1)])
        appended = await admin.alter_configs(
            {topic: [AlterConfigOp.append("cleanup.policy", "compact")]}
        )
        assert appended == {topic: None}
        entries = await configs_when(
            admin,
            topic,
            lambda e: e["cleanup.policy"].value == "delete,compact",
            names=["cleanup.policy"],
            include_synonyms=True,
            include_documentation=True,
        )
        assert list(entries) == ["cleanup.policy"]
        policy = entries["cleanup.policy"]
        assert (policy.value, policy.type) == ("delete,compact", ConfigType.LIST)
        assert [(s.name, s.value, s.source) for s in policy.synonyms] == [
            ("cleanup.policy", "delete,compact", ConfigSource.DYNAMIC_TOPIC_CONFIG),
            ("log.cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG),
        ]
        assert policy.documentation and "retention policy" in policy.documentation
        await admin.alter_configs({topic: [AlterConfigOp.subtract("cleanup.policy", "delete")]})
        assert await admin.alter_configs({topic: {"retention.ms": "5"}}, validate_only=True) == {
            topic: None
        }
        entries = await configs_when(admin, topic, lambda e: e["cleanup.policy"].value == "compact")
        assert entries["retention.ms"].source is ConfigSource.DEFAULT_CONFIG  # only validated

        gone = ConfigResource.topic(unique("adm-kcfg-none"))
        refused = await admin.alter_configs(
            {topic: {"retention.ms": "abc"}, gone: {"retention.ms": "1"}}
        )
        assert isinstance(refused[topic], InvalidConfigError) and "LONG" in str(refused[topic])
        assert isinstance(refused[gone], UnknownTopicOrPartitionError)


async def test_on_kafka_broker_and_group_configs(kafka: Any) -> None:
    group = ConfigResource.group(unique("adm-kcfg-g"))
    async with AdminClient(kafka.bootstrap_servers) as admin:
        node = (await admin.describe_cluster()).nodes[0].node_id
        broker, defaults = ConfigResource.broker(node), ConfigResource.broker()
        try:  # the session's cluster: put the broker's configs back whatever happens
            changed = await admin.alter_configs(
                {
                    broker: {"message.max.bytes": "2000000"},
                    defaults: {"log.cleaner.backoff.ms": "16000"},
                }
            )
            assert changed == {broker: None, defaults: None}

            def applied(found: Any) -> bool:
                values = found.raise_for_errors()
                return (
                    values[broker]["message.max.bytes"].value == "2000000"
                    and values[broker]["log.cleaner.backoff.ms"].value == "16000"
                )

            names = ["message.max.bytes", "log.cleaner.backoff.ms"]
            found = await eventually(
                lambda: admin.describe_configs([broker, defaults], names=names), applied
            )
            mine = found.raise_for_errors()
            assert mine[broker]["message.max.bytes"].source is ConfigSource.DYNAMIC_BROKER_CONFIG
            assert (
                mine[broker]["log.cleaner.backoff.ms"].source
                is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
            )
            assert mine[defaults]["log.cleaner.backoff.ms"].value == "16000"
            static = await admin.alter_configs({broker: {"log.dirs": "/elsewhere"}})
            assert isinstance(static[broker], InvalidRequestError)
        finally:
            await admin.alter_configs(
                {broker: {"message.max.bytes": None}, defaults: {"log.cleaner.backoff.ms": None}}
            )

        described = (await admin.describe_configs([group])).raise_for_errors()[group]
        assert described["share.auto.offset.reset"].value == "latest"
        assert described["share.auto.offset.reset"].source is ConfigSource.DEFAULT_CONFIG
        wanted = {"share.auto.offset.reset": "earliest", "consumer.session.timeout.ms": "50000"}
        assert await admin.alter_configs({group: wanted}) == {group: None}
        described = await configs_when(
            admin, group, lambda e: {k: e[k].value for k in wanted} == wanted
        )
        assert {described[k].source for k in wanted} == {ConfigSource.GROUP_CONFIG}
        refused = await admin.alter_configs({group: {"consumer.session.timeout.ms": "1"}})
        assert isinstance(refused[group], InvalidConfigError) and "range" in str(refused[group])
