"""What the `Consumer` asks of its group, whatever kind it is.

A consumer without a group commits nowhere; one that assigns its own partitions but names a
`group_id` commits to and fetches from that group without joining it (Java's behaviour,
`StandaloneGroup`); a subscribing consumer is a member of a classic or KIP-848 group. The
`Consumer` only ever talks to this protocol, and keeps partitions in step with the group only
through the shared `SubscriptionState`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol

import anyio
import anyio.abc

from krafka.errors import InvalidStateError, KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.io.driver import MachineDriver, OutcomeTimeout
from krafka.sansio.consumer.subscription import SubscriptionState
from krafka.sansio.group.offsets.standalone import StandaloneOffsets
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

Offsets = Mapping[TopicPartition, OffsetAndMetadata]
log = logging.getLogger(__name__)


class Membership(Protocol):
    """A consumer's group: commits, committed offsets, and (for members) the assignment."""

    group_id: str | None

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start background work (heartbeats ...) in `task_group`."""
        ...

    async def on_poll(self, now: float) -> None:
        """Called at the start of every poll: listener steps, auto-commit, assignments."""
        ...

    def raise_failure(self) -> None:
        """Raise (once) an error of the group the application must see, e.g. one refusing it
        the group; a poll calls this whenever it wakes, so it ends at once."""
        ...

    async def commit(self, offsets: Offsets, timeout: float | None = None) -> None: ...

    def commit_async(self, offsets: Offsets) -> PendingCommit: ...

    async def committed(
        self, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]: ...

    def group_metadata(self) -> ConsumerGroupMetadata: ...

    async def close(self, timeout: float, *, autocommit: Offsets | None) -> None: ...


class NoGroup:
    """No `group_id`: nothing is committed; every partition starts by the reset policy."""

    group_id: str | None = None

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        return None

    async def on_poll(self, now: float) -> None:
        return None

    def raise_failure(self) -> None:
        return None

    async def commit(self, offsets: Offsets, timeout: float | None = None) -> None:
        raise InvalidStateError("commit needs a group_id")

    def commit_async(self, offsets: Offsets) -> PendingCommit:
        raise InvalidStateError("commit needs a group_id")

    async def committed(
        self, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        return dict.fromkeys(partitions)

    def group_metadata(self) -> ConsumerGroupMetadata:
        raise InvalidStateError("group_metadata needs a group_id")

    async def close(self, timeout: float, *, autocommit: Offsets | None) -> None:
        return None


class DrivenOffsets:
    """`commit`, `commit_async` and `committed` over a sans-IO machine on a `MachineDriver`:
    what the standalone and the group memberships share."""

    _machine: Any
    _driver: MachineDriver
    _task_group: anyio.abc.TaskGroup | None

    def _wait(self, timeout: float | None) -> float | None:
        """How long to wait for an operation's outcome (its own timeout plus a margin)."""
        return None if timeout is None else timeout + 5.0

    def raise_failure(self) -> None:
        return None

    async def commit(self, offsets: Offsets, timeout: float | None = None) -> None:
        if not offsets:
            return
        op = self._machine.commit(offsets, anyio.current_time(), timeout)
        try:
            await self._driver.outcome(op, self._wait(timeout))
        except OutcomeTimeout as exc:
            raise KafkaTimeoutError(
                f"commit(timeout={timeout}) got no outcome in time: it is still pending (sent "
                "and unanswered, or queued behind an earlier commit), so the offsets may yet be "
                "committed; it is safe to commit them again (commits are applied in call order)"
            ) from exc

    def commit_async(self, offsets: Offsets) -> PendingCommit:
        return spawn(self._task_group, self.commit, offsets)

    async def committed(
        self, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        wanted = list(partitions)
        if not wanted:
            return {}
        op = self._machine.fetch_committed(wanted, anyio.current_time(), timeout)
        found: Mapping[TopicPartition, OffsetAndMetadata | None] = await self._driver.outcome(
            op, self._wait(timeout)
        )
        return {tp: found.get(tp) for tp in wanted}


class StandaloneGroup(DrivenOffsets):
    """Manual assignment with a `group_id`: commits and offset fetches, no membership."""

    def __init__(
        self,
        client: KafkaClient,
        group_id: str,
        subscription: SubscriptionState,
        default_api_timeout: float,
        auto_commit_interval: float | None,
    ) -> None:
        self.group_id: str | None = group_id
        self._timeout = default_api_timeout
        self._subscription = subscription
        self._auto_commit_interval = auto_commit_interval
        self._next_auto_commit: float | None = None
        self._machine = StandaloneOffsets(group_id, default_api_timeout=default_api_timeout)
        self._driver = MachineDriver(client, self._machine, name=f"krafka offsets {group_id}")
        self._task_group: anyio.abc.TaskGroup | None = None

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        self._task_group = task_group
        await task_group.start(self._driver.run)

    async def on_poll(self, now: float) -> None:
        """Auto-commit the consumed positions every `auto_commit_interval`, in the background
        (a failed auto-commit is logged and retried at the next interval)."""
        interval = self._auto_commit_interval
        if interval is None:
            return
        if self._next_auto_commit is None:
            self._next_auto_commit = now + interval
        elif now >= self._next_auto_commit:
            self._next_auto_commit = now + interval
            offsets = self._subscription.all_consumed()
            if offsets and self._task_group is not None:
                self._task_group.start_soon(self._auto_commit, offsets)

    async def _auto_commit(self, offsets: Offsets) -> None:
        try:
            await self.commit(offsets)
        except KrafkaError as exc:
            log.warning("krafka consumer: auto-commit to %s failed: %s", self.group_id, exc)

    def group_metadata(self) -> ConsumerGroupMetadata:
        assert self.group_id is not None
        return ConsumerGroupMetadata(self.group_id)

    async def close(self, timeout: float, *, autocommit: Offsets | None) -> None:
        if autocommit:
            with anyio.move_on_after(timeout):
                await self.commit(autocommit, timeout)

    def _wait(self, timeout: float | None) -> float:
        """Never unbounded: the default API timeout stands in for none."""
        return (self._timeout if timeout is None else timeout) + 5.0


class PendingCommit:
    """A commit running in the background (`Consumer.commit_async`): `offsets` are what it
    commits; awaiting it returns when the coordinator answered, raising its error. A commit cut
    short by the consumer closing raises `InvalidStateError` (it may or may not have landed)."""

    __slots__ = ("_done", "_error", "offsets")

    def __init__(self, offsets: Offsets) -> None:
        self.offsets = dict(offsets)
        self._done = anyio.Event()
        self._error: BaseException | None = None

    async def run(self, commit: Callable[[Offsets], Awaitable[None]]) -> None:
        try:
            await commit(self.offsets)
        except Exception as exc:
            self._error = exc
        except BaseException:
            self._error = InvalidStateError(
                "the consumer closed before the commit was answered: the offsets may or may "
                "not be committed"
            )
            raise
        finally:
            self._done.set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def __await__(self):  # type: ignore[no-untyped-def]
        return self._wait().__await__()

    async def _wait(self) -> None:
        await self._done.wait()
        if self._error is not None:
            raise self._error


def spawn(
    task_group: anyio.abc.TaskGroup | None,
    commit: Callable[[Offsets], Awaitable[None]],
    offsets: Offsets,
) -> PendingCommit:
    """`commit(offsets)` running in the background of `task_group`."""
    if task_group is None:
        raise InvalidStateError("the consumer is not started")
    pending = PendingCommit(offsets)
    task_group.start_soon(pending.run, commit)
    return pending


__all__ = ["Membership", "NoGroup", "Offsets", "PendingCommit", "StandaloneGroup"]
