"""`BulkDelivery`: the one handle `Producer.send_many` returns for all the records it appended.

A producer batch is delivered or fails as a whole, so records appended together are settled
per batch, not per record: the handle keeps the batches its records joined (in the order it
first joined each) and is done once every one of them is settled - after a split
(MESSAGE_TOO_LARGE), once both halves are. `await bulk` returns the number of records, or
raises the error of the first batch (in that order) that failed, noting how many of the
call's batches failed. Waiting costs one `anyio.Event` per pending batch
(`producer_handle.wait_delivery`'s), none per record.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

from krafka.errors import KrafkaError
from krafka.io.producer_handle import batch_event
from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.producer.record import fresh_error


def leaves(batch: ProducerBatch) -> Iterator[ProducerBatch]:
    """The batches holding `batch`'s records now: itself, or (split) its halves' leaves."""
    if batch.halves is None:
        yield batch
        return
    for half in batch.halves:
        yield from leaves(half)


class BulkDelivery:
    """Records appended by one `send_many` call on their way; `await` it for their count."""

    __slots__ = ("_batches", "count")

    def __init__(self, batches: list[ProducerBatch], count: int) -> None:
        self._batches = batches
        #: How many records the call appended.
        self.count = count

    @property
    def done(self) -> bool:
        """Every record delivered or failed."""
        return all(batch.settled for batch in self._batches)

    def exception(self) -> KrafkaError | None:
        """The first failure (see the module doc), or None (also while still pending)."""
        failed = [leaf for batch in self._batches for leaf in leaves(batch) if leaf.error]
        if not failed:
            return None
        first = failed[0]
        error = fresh_error(first.error)  # type: ignore[arg-type]
        error.add_note(
            f"send_many: {len(failed)} of the batches holding its {self.count} records failed; "
            f"the first in {first.topic}-{first.partition}"
        )
        return error

    def result(self) -> int:
        """The number of records, all delivered; raises the first failure. Only valid once
        `done`."""
        if not self.done:
            raise RuntimeError("records not delivered yet")
        error = self.exception()
        if error is not None:
            raise error
        return self.count

    async def wait(self) -> int:
        """Wait until every record is settled; `result()`."""
        for batch in self._batches:
            for leaf in _pending_leaves(batch):
                await _settled(leaf)
        return self.result()

    def __await__(self) -> Generator[Any, None, int]:
        return self.wait().__await__()

    def __repr__(self) -> str:
        state = "done" if self.done else "pending"
        return f"<BulkDelivery {self.count} records in {len(self._batches)} batches {state}>"


def _pending_leaves(batch: ProducerBatch) -> Iterator[ProducerBatch]:
    return (leaf for leaf in leaves(batch) if not leaf.settled)


async def _settled(batch: ProducerBatch) -> None:
    """Wait until `batch` is settled (woken as its records' handles are: `wake_waiters`)."""
    while not batch.settled:
        if batch.halves is not None:
            for leaf in _pending_leaves(batch):
                await _settled(leaf)
            return
        await batch_event(batch).wait()


__all__ = ["BulkDelivery", "leaves"]
