"""Committed offsets for a consumer that assigns its partitions itself but names a group.

Java commits such a consumer's offsets to the group with generation -1 and no member id, and
fetches them from the group's coordinator, without ever joining. `StandaloneOffsets` is that
as a complete machine of the `krafka.sansio.actions` contract: an `OffsetClient` with
`StandaloneCommits`, its requests to `Coordinator(group_id)`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from krafka.errors import KrafkaError
from krafka.sansio.actions import SendRequest
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.group.coordinator import GroupCoordinator
from krafka.sansio.group.offsets.client import OffsetClient, StandaloneCommits
from krafka.structs import OffsetAndMetadata, TopicPartition


class StandaloneOffsets:
    """Commits and committed offsets of group `group_id` for a consumer that is no member."""

    def __init__(
        self,
        group_id: str,
        *,
        retry_backoff: float = 0.1,
        retry_backoff_max: float = 1.0,
        default_api_timeout: float = 60.0,
        require_stable: bool = True,
        rand: Callable[[], float] = random.random,
    ) -> None:
        policy = BackoffPolicy(
            initial=retry_backoff, maximum=max(retry_backoff, retry_backoff_max), max_retries=None
        )
        self.group_id = group_id
        self.default_api_timeout = default_api_timeout
        self.coordinator = GroupCoordinator(group_id)
        self.offsets = OffsetClient(
            group_id,
            self.coordinator,
            StandaloneCommits(),
            backoff=policy,
            require_stable=require_stable,
            rand=rand,
        )

    def commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        now: float,
        timeout: float | None = None,
    ) -> int:
        return self.offsets.commit(offsets, now, self._timeout(timeout))

    def fetch_committed(
        self, partitions: Iterable[TopicPartition], now: float, timeout: float | None = None
    ) -> int:
        return self.offsets.fetch(partitions, now, self._timeout(timeout))

    def next_actions(self, now: float) -> list[Any]:
        actions = self.offsets.next_actions(now)
        actions += self.coordinator.actions()
        return actions

    def next_deadline(self) -> float | None:
        return self.offsets.next_deadline()

    def owns(self, sent: SendRequest[Any]) -> bool:
        return self.offsets.owns(sent)

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        self.offsets.on_response(sent, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        self.offsets.on_failure(sent, error, now)

    def _timeout(self, timeout: float | None) -> float:
        return self.default_api_timeout if timeout is None else timeout


__all__ = ["StandaloneOffsets"]
