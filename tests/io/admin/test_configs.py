"""Config admin calls against Tansu: describe a topic's and a broker's configs, change them
incrementally. (Tansu reports only the configs set on a topic, as DEFAULT_CONFIG, and closes
the connection when asked for named configs: names are checked with scripted brokers.)"""

from __future__ import annotations

from typing import Any

import pytest
from _members import unique

from krafka import AdminClient, AlterConfigOp, ConfigResource, NewTopic
from krafka.errors import ConfigError
from krafka.io.admin.config import admin_keywords

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def test_describe_and_alter_topic_configs(broker: Any) -> None:
    name = unique("adm-cfg")
    topic = ConfigResource.topic(name)
    async with AdminClient(broker.bootstrap_servers) as admin:
        await admin.create_topics([NewTopic(name, 1, configs={"retention.ms": "60000"})])
        entries = (await admin.describe_configs([topic])).raise_for_errors()[topic]
        assert entries["retention.ms"].value == "60000"

        changed = await admin.alter_configs(
            {
                topic: [
                    AlterConfigOp.set("retention.ms", "120000"),
                    AlterConfigOp.set("segment.ms", "3600000"),
                ]
            }
        )
        assert changed[topic] is None
        entries = (await admin.describe_configs([topic])).raise_for_errors()[topic]
        assert (
            entries["retention.ms"].value == "120000" and entries["segment.ms"].value == "3600000"
        )

        await admin.alter_configs({topic: {"segment.ms": None, "cleanup.policy": "compact"}})
        entries = (await admin.describe_configs([topic])).raise_for_errors()[topic]
        assert "segment.ms" not in entries and entries["cleanup.policy"].value == "compact"


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
