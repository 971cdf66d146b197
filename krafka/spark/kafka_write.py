"""Writing a DataFrame to Kafka from each Spark task through an idempotent producer kept
between the tasks of the executor process (`krafka.spark.client_pool`).

Columns as Spark's Kafka sink takes them: `value` (binary or string, required), `key`, `topic`
(unless the `topic` option is set, which wins), `partition` (int), `headers`
(array<struct<key string, value binary>>). Rows go out in bulk (`Producer.send_many`, one call per
Arrow batch and topic); the task waits for every record's acknowledgement, and the first
delivery error fails it with the broker's message.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future
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
    them: a record not written raises, and its producer is closed rather than pooled).

    Each Arrow batch goes out with one `send_many` per topic (no future per row), settled
    once every batch is appended."""
    from krafka.sync import Producer

    settings = dict(options.client)

    def make() -> Any:
        return Producer.from_config(settings, enable_idempotence=True)

    with PRODUCERS.lease(settings, make) as producer:
        pending: list[Future[int]] = []
        for batch in batches:
            pending += _send_rows(producer, batch, options)
        return sum(_settle(future) for future in pending)


def _settle(future: Future[int]) -> int:
    """The records one `send_many` wrote; its first delivery error, as the sink's."""
    try:
        return future.result()
    except KrafkaError as error:
        raise KrafkaError(f"krafka sink: a record was not written: {error}") from error


def _send_rows(producer: Any, batch: Any, options: SinkOptions) -> list[Future[int]]:
    """`send_many` the rows of `batch`: once, or once per topic of the `topic` column (in row
    order within each topic)."""
    n = batch.num_rows
    if n == 0:
        return []
    keys, values = _binary(batch, "key"), _binary(batch, "value")
    names = batch.schema.names
    partitions = batch.column("partition").to_pylist() if "partition" in names else None
    headers = (
        [
            None if h is None else [(item["key"], item["value"]) for item in h]
            for h in batch.column("headers").to_pylist()
        ]
        if "headers" in names
        else None
    )
    if options.topic is not None:
        return [
            producer.send_many(options.topic, values, keys, partition=partitions, headers=headers)
        ]
    rows: dict[str, list[int]] = {}
    for row, topic in enumerate(batch.column("topic").to_pylist()):
        if topic is None:
            raise KrafkaError("krafka sink: a row has a null topic and no 'topic' option is set")
        rows.setdefault(topic, []).append(row)
    return [
        producer.send_many(
            topic,
            _pick(values, picked),
            _pick(keys, picked),
            partition=_pick(partitions, picked),
            headers=_pick(headers, picked),
        )
        for topic, picked in rows.items()
    ]


def _pick(column: list[Any] | None, rows: list[int]) -> list[Any] | None:
    return None if column is None else [column[row] for row in rows]


def _binary(batch: Any, name: str) -> list[Any] | None:
    """A key or value column as bytes (strings are sent as their UTF-8 bytes); None when
    there is none."""
    import pyarrow as pa

    if name not in batch.schema.names:
        return None
    column = batch.column(name)
    if not pa.types.is_binary(column.type):
        column = column.cast(pa.binary())
    values: list[Any] = column.to_pylist()
    return values


__all__ = ["check_schema", "write_batches"]
