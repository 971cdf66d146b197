"""Admin calls on the cluster: its brokers and controller, and brokers' log directories."""

from __future__ import annotations

from collections.abc import Iterable

from krafka.io.admin.base import AdminBase
from krafka.sansio.admin.cluster import ClusterDescription, DescribeLogDirs, LogDirDescription
from krafka.sansio.admin.results import Results
from krafka.sansio.admin.routing import ToBrokers


class ClusterAdmin(AdminBase):
    async def describe_cluster(
        self, *, include_authorized_operations: bool = False, timeout: float | None = None
    ) -> ClusterDescription:
        """The cluster id, the controller and every broker (DescribeCluster, or Metadata on
        brokers older than Kafka 2.8)."""
        return await self._describe_cluster(include_authorized_operations, timeout)

    async def describe_log_dirs(
        self, brokers: Iterable[int] | None = None, *, timeout: float | None = None
    ) -> Results[int, dict[str, LogDirDescription]]:
        """`{broker id: {log dir path: LogDirDescription}}` for some brokers (default: all)."""
        if brokers is None:
            nodes = await self._brokers(timeout)
            ids = sorted(nodes)
            routing: ToBrokers[int] = ToBrokers(lambda b: b, nodes=nodes)
        else:
            ids = list(dict.fromkeys(int(b) for b in brokers))
            routing = ToBrokers(lambda b: b)
        return Results(await self._run(DescribeLogDirs(), routing, ids, timeout))
