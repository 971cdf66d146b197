"""`PendingCommit`, what `Consumer.commit_async` returns: its offsets, and its outcome when the
consumer's task group stops the commit before an answer."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from krafka import OffsetAndMetadata, TopicPartition
from krafka.errors import InvalidStateError
from krafka.io.consumer.pending_commit import Offsets, PendingCommit

pytestmark = pytest.mark.anyio

OFFSETS = {TopicPartition("t", 0): OffsetAndMetadata(7)}


async def test_a_commit_cut_short_is_not_reported_as_done() -> None:
    async def unanswered(offsets: Offsets) -> None:
        await anyio.sleep_forever()

    pending = PendingCommit(OFFSETS)
    async with anyio.create_task_group() as tg:  # the membership's, cancelled by close
        tg.start_soon(pending.run, unanswered)
        await anyio.lowlevel.checkpoint()
        tg.cancel_scope.cancel()
    assert pending.done and pending.offsets == OFFSETS
    with pytest.raises(InvalidStateError, match="may or may not be committed"):
        await pending


async def test_an_answered_commit_and_a_refused_one() -> None:
    async def answered(offsets: Offsets) -> None:
        assert offsets == OFFSETS

    async def refused(offsets: Offsets) -> None:
        raise InvalidStateError("no")

    done, failed = PendingCommit(OFFSETS), PendingCommit(OFFSETS)
    async with anyio.create_task_group() as tg:
        tg.start_soon(done.run, answered)
        tg.start_soon(failed.run, refused)
    await done
    with pytest.raises(InvalidStateError, match="no"):
        await failed
