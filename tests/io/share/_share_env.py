"""A topic and share groups reading it from the earliest offset, on librdkafka's mock cluster
(cluster-wide share settings) or on Apache Kafka (per-group configs, set through krafka's
AdminClient: `share.auto.offset.reset`, `share.record.lock.duration.ms`,
`share.delivery.count.limit`)."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from krafka import AdminClient, ConfigResource, NewTopic

_GROUPS = itertools.count()


@dataclass
class ShareEnv:
    bootstrap_servers: str
    topic: str
    group: str
    mock: Any = None  # the MockCluster, on the mock
    kafka: Any = None  # the KafkaCluster, on Apache Kafka
    settings: dict[str, int] = field(default_factory=dict)

    async def new_group(self) -> str:
        """Another share group with the same settings."""
        if self.kafka is None:
            return f"sg{next(_GROUPS)}"
        return await _configure_group(self.bootstrap_servers, self.settings)


async def mock_share_env(make_mock_cluster: Any, partitions: int, **settings: int) -> ShareEnv:
    cluster = make_mock_cluster(3, topics={"jobs": partitions})
    cluster.sharegroup_set_auto_offset_reset("earliest")
    cluster.sharegroup_set_heartbeat_interval(200)
    if "lock_ms" in settings:
        cluster.sharegroup_set_record_lock_duration(settings["lock_ms"])
    if "max_attempts" in settings:
        cluster.sharegroup_set_max_delivery_attempts(settings["max_attempts"])
    return ShareEnv(cluster.bootstrap_servers, "jobs", "sg", mock=cluster, settings=settings)


async def kafka_share_env(kafka: Any, partitions: int, **settings: int) -> ShareEnv:
    topic = f"jobs-{time.time_ns()}"
    async with AdminClient(kafka.bootstrap_servers) as admin:
        (await admin.create_topics([NewTopic(topic, partitions)])).raise_for_errors()
    group = await _configure_group(kafka.bootstrap_servers, settings)
    return ShareEnv(kafka.bootstrap_servers, topic, group, kafka=kafka, settings=settings)


async def _configure_group(bootstrap: str, settings: dict[str, int]) -> str:
    group = f"sg-{time.time_ns()}"
    configs = {"share.auto.offset.reset": "earliest"}
    if "lock_ms" in settings:
        configs["share.record.lock.duration.ms"] = str(settings["lock_ms"])
    if "max_attempts" in settings:
        configs["share.delivery.count.limit"] = str(settings["max_attempts"])
    async with AdminClient(bootstrap) as admin:
        (await admin.alter_configs({ConfigResource.group(group): configs})).raise_for_errors()
    return group
