"""Admin calls on topics: create, delete, list, describe, add partitions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from krafka.io.admin.base import AdminBase, names_of
from krafka.sansio.admin.results import Results
from krafka.sansio.admin.routing import ToAnyBroker, ToBrokers
from krafka.sansio.admin.topics import (
    CLUSTER,
    CreatedTopic,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    DescribeTopics,
    ListTopics,
    NewPartitions,
    NewTopic,
    TopicDescription,
)


class TopicsAdmin(AdminBase):
    async def create_topics(
        self,
        new_topics: Iterable[NewTopic],
        *,
        validate_only: bool = False,
        timeout: float | None = None,
    ) -> Results[str, CreatedTopic]:
        """Create topics (on the controller); with `validate_only` only check they could be.

        `{name: CreatedTopic or error}` — e.g. `TopicAlreadyExistsError` for one that exists.
        """
        topics: dict[str, NewTopic] = {}
        for topic in new_topics:
            if topic.name in topics:
                raise ValueError(f"topic {topic.name!r} is listed twice")
            topics[topic.name] = topic
        handler = CreateTopics(topics, validate_only, self._timeout_ms)
        return Results(await self._run(handler, ToBrokers(controller=True), topics, timeout))

    async def delete_topics(
        self, topics: Iterable[str], *, timeout: float | None = None
    ) -> Results[str, None]:
        """Delete topics: `{name: None or error}`."""
        names = names_of(topics, "delete_topics")
        handler = DeleteTopics(self._timeout_ms)
        return Results(await self._run(handler, ToBrokers(controller=True), names, timeout))

    async def list_topics(
        self, *, internal: bool = False, timeout: float | None = None
    ) -> list[str]:
        """The sorted names of the cluster's topics (internal ones like `__consumer_offsets`
        only with `internal=True`)."""
        names: list[str] = await self._run_one(
            ListTopics(internal), ToAnyBroker(), CLUSTER, timeout
        )
        return names

    async def describe_topics(
        self,
        topics: Iterable[str],
        *,
        include_authorized_operations: bool = False,
        timeout: float | None = None,
    ) -> Results[str, TopicDescription]:
        """Partitions, leaders, replicas, in-sync replicas and topic ids of topics."""
        names = names_of(topics, "describe_topics")
        handler = DescribeTopics(include_authorized_operations)
        return Results(await self._run(handler, ToAnyBroker(), names, timeout))

    async def create_partitions(
        self,
        new_partitions: Mapping[str, NewPartitions | int],
        *,
        validate_only: bool = False,
        timeout: float | None = None,
    ) -> Results[str, None]:
        """Grow topics: `{"orders": 12}` or `{"orders": NewPartitions(12, [[1], [2]])}`."""
        wanted = {
            name: new if isinstance(new, NewPartitions) else NewPartitions(int(new))
            for name, new in new_partitions.items()
        }
        handler = CreatePartitions(wanted, validate_only, self._timeout_ms)
        return Results(await self._run(handler, ToBrokers(controller=True), wanted, timeout))
