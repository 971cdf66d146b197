"""Committed offsets for a consumer that assigns its partitions itself but names a group.

Java commits such a consumer's offsets to the group with generation -1 and no member id, and
fetches them from the group's coordinator, without ever joining. `StandaloneOffsets` is that
as a complete machine of the `krafka.sansio.actions` contract: a `CoordinatorLink` and an
`OffsetClient` with `StandaloneCommits`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from krafka.errors import KrafkaError
from krafka.sansio.actions import SendRequest
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.coordinator import CoordinatorLink, CoordinatorType
from krafka.sansio.group.offsets.client import OffsetClient, StandaloneCommits
from krafka.structs import OffsetAndMetadata, TopicPartition


class StandaloneOffsets:
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
        self.link = CoordinatorLink(group_id, CoordinatorType.GROUP, policy, rand)
        self.offsets = OffsetClient(
            group_id,
            self.link,
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
        if self.offsets.busy:
            lookup = self.link.lookup(now)
            if lookup is not None:
                actions.append(lookup)
        return actions

    def next_deadline(self) -> float | None:
        times = [self.offsets.next_deadline()]
        if self.offsets.busy:
            times.append(self.link.next_deadline())
        return min((t for t in times if t is not None), default=None)

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        if self.link.owns(sent):
            self.link.on_response(sent, response, now)
            self._lookup_answered()
        else:
            self.offsets.on_response(sent, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if self.link.owns(sent):
            self.link.on_failure(sent, error, now)
            self._lookup_answered()
        else:
            self.offsets.on_failure(sent, error, now)

    def _lookup_answered(self) -> None:
        error = self.link.fatal_error()
        if error is not None:
            self.offsets.fail_all(error)

    def _timeout(self, timeout: float | None) -> float:
        return self.default_api_timeout if timeout is None else timeout


__all__ = ["StandaloneOffsets"]
