"""Writing a DataFrame to Kafka from each Spark task through an idempotent producer kept
between the tasks of the executor process (`krafka.spark.client_pool`).

Columns as Spark's Kafka sink takes them: `value` (binary or string, required), `key`, `topic`
(unless the `topic` option is set, which wins), `partition` (int), `headers`
(array<struct<key string, value binary>>). The task waits for every record's acknowledgement;
the first delivery error fails it with the broker's message.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from krafka.errors import ConfigError, KrafkaError
from krafka.spark.client_pool import PRODUCERS
from krafka.spark.kafka_options import SinkOptions


def check_schema(schema: Any, options: SinkOptions) -> None:
    """Fail early (on the driver) on columns the sink cannot write."""
    from pyspark.sql.types import BinaryType, IntegerType, StringType

    names = {f.name: f.dataType for f in schema.fields}
    if "value" not in names:
        raise ConfigError("krafka sink: the DataFrame needs a 'value' column")
    for name in ("key", "value", "topic"):
        kind = names.get(name)
        allowed = (StringType,) if name == "topic" else (BinaryType, StringType)
        if kind is not None and not isinstance(kind, allowed):
            raise ConfigError(f"krafka sink: column {name!r} must be binary or string, not {kind}")
    if "partition" in names and not isinstance(names["partition"], IntegerType):
        raise ConfigError("krafka sink: column 'partition' must be an int")
    if options.topic is None and "topic" not in names:
        raise ConfigError("krafka sink: set the 'topic' option or give a 'topic' column")


def write_batches(batches: Iterable[Any], options: SinkOptions) -> int:
    """Produce every row of the Arrow `batches`; the number of records acknowledged (all of
    them: a record not written raises, and its producer is closed rather than pooled)."""
    from krafka.sync import Producer

    settings = dict(options.client)

    def make() -> Any:
        return Producer.from_config(settings, enable_idempotence=True)

    sent = 0
    with PRODUCERS.lease(settings, make) as producer:
        futures: list[Any] = []
        for batch in batches:
            _send_rows(producer.send, batch, options, futures)
            if len(futures) >= 100_000:
                sent += _settle(futures)
                futures = []
        producer.flush()
        sent += _settle(futures)
    return sent


def _settle(futures: list[Any]) -> int:
    """Raise the first delivery error of `futures` (all done). A producer batch is written or
    fails as a whole, so once one record of a batch that was never split is delivered, the
    others of that batch are not looked at one by one."""
    written: set[int] = set()
    for future in futures:
        handle = future.handle
        if handle is not None and id(handle.batch) in written:
            continue
        error = future.exception()
        if error is not None:
            raise KrafkaError(f"krafka sink: a record was not written: {error}") from error
        if handle is not None and handle.delivered() is not None:
            written.add(id(handle.batch))
    return len(futures)


def _send_rows(send: Any, batch: Any, options: SinkOptions, futures: list[Any]) -> None:
    """`send` every row of `batch`; the plain case (a fixed topic, no partition or headers
    columns) runs as one tight loop over the key and value columns."""
    names = set(batch.schema.names)
    n = batch.num_rows
    keys, values = _binary(batch, "key", n), _binary(batch, "value", n)
    if options.topic is not None and not names & {"partition", "headers"}:
        topic, append = options.topic, futures.append
        for key, value in zip(keys, values, strict=True):
            append(send(topic, value, key))
        return
    topics = [options.topic] * n if options.topic is not None else _column(batch, "topic", n)
    partitions = _column(batch, "partition", n)
    headers = [
        None if h is None else [(item["key"], item["value"]) for item in h]
        for h in _column(batch, "headers", n)
    ]
    for topic, key, value, partition, header in zip(
        topics, keys, values, partitions, headers, strict=True
    ):
        if topic is None:
            raise KrafkaError("krafka sink: a row has a null topic and no 'topic' option is set")
        futures.append(send(topic, value, key=key, partition=partition, headers=header))


def _column(batch: Any, name: str, n: int) -> list[Any]:
    return batch.column(name).to_pylist() if name in batch.schema.names else [None] * n


def _binary(batch: Any, name: str, n: int) -> list[Any]:
    """A key or value column as bytes (strings are sent as their UTF-8 bytes)."""
    import pyarrow as pa

    if name not in batch.schema.names:
        return [None] * n
    column = batch.column(name)
    if not pa.types.is_binary(column.type):
        column = column.cast(pa.binary())
    values: list[Any] = column.to_pylist()
    return values


__all__ = ["check_schema", "write_batches"]
