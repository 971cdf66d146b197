"""Writing a DataFrame to Kafka from each Spark task: one idempotent producer per task.

Columns as Spark's Kafka sink takes them: `value` (binary or string, required), `key`, `topic`
(unless the `topic` option is set, which wins), `partition` (int), `headers`
(array<struct<key string, value binary>>). The task waits for every record's acknowledgement;
the first delivery error fails it with the broker's message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from krafka.errors import ConfigError, KrafkaError
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
    """Produce every row of the Arrow `batches`; the number of records acknowledged."""
    from krafka.sync import Producer

    sent = 0
    with Producer.from_config(dict(options.client), enable_idempotence=True) as producer:
        futures = []
        for batch in batches:
            for topic, key, value, partition, headers in _rows(batch, options):
                futures.append(
                    producer.send(topic, value, key=key, partition=partition, headers=headers)
                )
            if len(futures) >= 100_000:
                sent += _settle(futures)
                futures = []
        producer.flush()
        sent += _settle(futures)
    return sent


def _settle(futures: list[Any]) -> int:
    for future in futures:
        error = future.exception()
        if error is not None:
            raise KrafkaError(f"krafka sink: a record was not written: {error}") from error
    return len(futures)


def _rows(batch: Any, options: SinkOptions) -> Iterator[tuple[Any, ...]]:
    names = set(batch.schema.names)
    n = batch.num_rows

    def column(name: str) -> list[Any]:
        return batch.column(name).to_pylist() if name in names else [None] * n

    topics = [options.topic] * n if options.topic is not None else column("topic")
    keys, values = map(_as_bytes, column("key")), map(_as_bytes, column("value"))
    partitions = column("partition")
    headers = [
        None if h is None else [(item["key"], item["value"]) for item in h]
        for h in column("headers")
    ]
    for topic, key, value, partition, header in zip(
        topics, keys, values, partitions, headers, strict=True
    ):
        if topic is None:
            raise KrafkaError("krafka sink: a row has a null topic and no 'topic' option is set")
        yield topic, key, value, partition, header


def _as_bytes(value: Any) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


__all__ = ["check_schema", "write_batches"]
