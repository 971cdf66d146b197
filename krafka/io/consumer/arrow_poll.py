"""`Consumer.poll_arrow`: fetched batches decoded straight into `pyarrow.RecordBatch`es, with
no Python object per record, on top of the consumer's `poll_batches` (without its span).

Rows are Spark's Kafka source rows with headers (`krafka.arrow.kafka_schema()`: key, value,
topic, partition, offset, timestamp in microseconds, timestampType, headers), one batch per
partition fetched. Positions and commits work as with `poll()`: after a call, each position
is the offset after the last record handed out (or filtered out). `poll_batches` moves a
position past all it fetched, so a partition cut short (by `max_records`, or by the last stable
offset under read_committed, on a broker that returns records past it) is sought back to the
first record not handed out, and fetched again from there by the next poll. With tracing on,
a call handing out rows makes one `poll {topic}` span (`krafka.io.tracing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from krafka.arrow import decode_fetched, kafka_rows, live_abort_index
from krafka.structs import TopicPartition

if TYPE_CHECKING:
    from krafka.io.consumer.consumer import Consumer
    from krafka.sansio.consumer.record import FetchedBatch

#: A fetched buffer is decoded into one Arrow batch (the codec's 256 MiB flush still applies).
_ONE_CHUNK = 1 << 62


async def poll_arrow(
    consumer: Consumer, timeout: float | None, max_records: int | None
) -> list[Any]:
    if max_records is not None and max_records <= 0:
        raise ValueError("max_records must be positive")
    fetched = await consumer._fetch_batches(timeout)
    budget = max_records
    out: list[Any] = []
    rewind: dict[TopicPartition, int] = {}
    for batch in fetched:
        tp = batch.partition
        if tp in rewind or budget == 0:
            rewind[tp] = min(rewind.get(tp, batch.start), batch.start)
            continue
        rows, stop = _decode(consumer, batch, budget)
        out += rows
        if budget is not None:
            budget -= sum(r.num_rows for r in rows)
        if stop < batch.next_offset:
            rewind[tp] = stop
    for tp, offset in rewind.items():
        await consumer.seek(tp, offset)
    if out and consumer.tracing is not None:
        consumer.tracing.polled_rows(out)
    return out


def _decode(consumer: Consumer, batch: FetchedBatch, budget: int | None) -> tuple[list[Any], int]:
    """The rows of `batch` to hand out (at most `budget`), and the offset after them."""
    settings = consumer.settings
    stop = batch.next_offset
    aborted = None
    if settings.read_committed:
        aborted = live_abort_index(batch.data, batch.aborted_transactions)
        if 0 <= batch.last_stable_offset < stop:
            stop = max(batch.start, batch.last_stable_offset)
    tp = batch.partition
    rows: list[Any] = []
    chunks = decode_fetched(
        batch.data, topic=tp.topic, partition=tp.partition, start=batch.start, end=stop,
        aborted=aborted, check_crc=settings.check_crcs,
        max_decompressed_size=settings.max_decompressed_size, max_rows=_ONE_CHUNK,
    )  # fmt: skip
    for chunk in chunks:
        if budget is not None and chunk.num_rows > budget:
            stop = chunk.column("offset")[budget].as_py()
            if budget:
                rows.append(kafka_rows(chunk.slice(0, budget)))
            break
        rows.append(kafka_rows(chunk))
        if budget is not None:
            budget -= chunk.num_rows
    return rows, stop


__all__ = ["poll_arrow"]
