"""`AdminClient`: manage topics, configs, groups, offsets, ACLs, SCRAM users, delegation tokens,
client quotas, producers and transactions of a Kafka cluster, on anyio (asyncio and trio).

    async with AdminClient(bootstrap_servers="127.0.0.1:9092") as admin:
        results = await admin.create_topics([NewTopic("orders", num_partitions=6)])
        results.raise_for_errors()                      # or look at each topic's outcome
        print(await admin.list_topics())                # ['orders', ...]
        groups = await admin.describe_groups(["order-processors"])

How results come back — one rule for every call:

* A call about many items (topics, groups, partitions, resources, ACLs, users ...) returns
  `Results`: a mapping of each item to its value, or to the `KrafkaError` that item failed
  with. One failed item never hides the others' success; `results.raise_for_errors()` gives
  the values or raises the first error, for all-or-nothing callers.
* A call about one thing (`describe_cluster`, `list_topics`, `list_groups`, `describe_acls`,
  and the calls on one group's offsets) returns its value, and raises its error.
* Any call raises when no item could be answered at all: no broker reachable within the
  timeout, an API the cluster does not have (`UnsupportedVersionError`), bad arguments.

Every request goes to the broker that must answer it (any broker, the controller, a group's or
transaction's coordinator, a partition's leader), batched per broker where the API allows, and
retriable errors (a leader or coordinator moved, a coordinator loading) are retried with
backoff until the call's `timeout` (default `default_api_timeout`, 60 s). The protocol work is
sans-IO (`krafka.sansio.admin`): one `AdminOperation` machine per call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from krafka.io.admin.acls import AclsAdmin
from krafka.io.admin.cluster import ClusterAdmin
from krafka.io.admin.config import admin_keywords
from krafka.io.admin.configs import ConfigsAdmin
from krafka.io.admin.delegation_tokens import DelegationTokensAdmin
from krafka.io.admin.group_offsets import GroupOffsetsAdmin
from krafka.io.admin.offsets import OffsetsAdmin
from krafka.io.admin.quotas import QuotasAdmin
from krafka.io.admin.scram import ScramAdmin
from krafka.io.admin.topics import TopicsAdmin
from krafka.io.admin.transactions import TransactionsAdmin


class AdminClient(
    TopicsAdmin,
    ConfigsAdmin,
    GroupOffsetsAdmin,
    OffsetsAdmin,
    ClusterAdmin,
    AclsAdmin,
    ScramAdmin,
    DelegationTokensAdmin,
    QuotasAdmin,
    TransactionsAdmin,
):
    """The Kafka admin client. Use as `async with AdminClient(...) as admin:` (or `start()` /
    `close()`). Options: `client_id`, `request_timeout` and `default_api_timeout` (seconds),
    `retry_backoff` / `retry_backoff_max`, `metadata_max_age`, and the connection's (TLS,
    SASL ...) as `KafkaClient` takes them."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> AdminClient:
        """An admin client from Java/librdkafka properties (`{"bootstrap.servers": ...,
        "default.api.timeout.ms": 30000, "security.protocol": "SASL_SSL", ...}`)."""
        return cls(**{**admin_keywords(config), **overrides})

    async def __aenter__(self) -> AdminClient:
        await self.start()
        return self


__all__ = ["AdminClient"]
