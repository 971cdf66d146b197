"""`Consumer.poll_arrow`: fetched batches decoded straight into `pyarrow.RecordBatch`es, with
no Python object per record, on top of the consumer's `poll_batches` (without its span).

Rows are Spark's Kafka source rows with headers (`krafka.arrow.kafka_schema()`: key, value,
topic, partition, offset, timestamp in microseconds, timestampType, headers), one batch per
partition fetched. Positions and commits work as with `poll()`: after a call, each position
is the offset after the last record handed out (or filtered out). Rows a call decoded but did
not hand out (`max_records` cut them short) are kept for the next calls, which hand them out
before waiting for more (`krafka.io.consumer.arrow_backlog`): the position stays at the first
of them, with no epoch bump, so fetching goes on after them and nothing is fetched or
decompressed twice. A partition cut short by the last stable offset under read_committed (on
a broker that returns records past it) is sought back to it once the rows before it are out,
and fetched again from there. With tracing on,
a call handing out rows makes one `poll {topic}` span (`krafka.io.tracing`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from krafka.arrow import decode_fetched, live_abort_index, spark_rows

if TYPE_CHECKING:
    from krafka.io.consumer.consumer import Consumer
    from krafka.sansio.consumer.record import FetchedBatch

#: Without `max_records`, a fetched buffer is decoded into one Arrow batch (the codec's 256 MiB
#: flush still applies).
_ONE_CHUNK = 1 << 62


async def poll_arrow(
    consumer: Consumer, timeout: float | None, max_records: int | None
) -> list[Any]:
    if max_records is not None and max_records <= 0:
        raise ValueError("max_records must be positive")
    engine, backlog = consumer._engine, consumer._arrow_backlog
    fetched = await consumer._fetch_batches(0.0 if backlog.servable(engine) else timeout)
    for batch in fetched:
        rows, end, refetch = _decode(consumer, batch, max_records)
        backlog.add(engine, batch.partition, rows, end, refetch)
    taken = backlog.take(engine, max_records)
    for tp, offset in taken.positions.items():
        engine.handed_out(tp, offset)
    for tp, offset in taken.seek.items():
        await consumer.seek(tp, offset)
    if taken.rows and consumer.tracing is not None:
        consumer.tracing.polled_rows(taken.rows)
    return taken.rows


def _decode(
    consumer: Consumer, batch: FetchedBatch, max_records: int | None
) -> tuple[Iterator[Any], int, bool]:
    """The rows of `batch` (Spark's Kafka rows) as they are decoded, in chunks of about
    `max_records`, the position after them, and whether that is a last stable offset to fetch
    again from."""
    settings = consumer.settings
    stop = batch.next_offset
    aborted = None
    if settings.read_committed:
        aborted = live_abort_index(batch.data, batch.aborted_transactions)
        if 0 <= batch.last_stable_offset < stop:
            stop = max(batch.start, batch.last_stable_offset)
    tp = batch.partition
    chunks = decode_fetched(
        batch.data, topic=tp.topic, partition=tp.partition, start=batch.start, end=stop,
        aborted=aborted, check_crc=settings.check_crcs,
        max_decompressed_size=settings.max_decompressed_size, max_rows=max_records or _ONE_CHUNK,
        finish=spark_rows,
    )  # fmt: skip
    return chunks, stop, stop < batch.next_offset


__all__ = ["poll_arrow"]
