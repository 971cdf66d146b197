"""`format("krafka-share")`: a streaming source reading a topic through a KIP-932 share group,
so several queries (or any other share consumers) take records from it as from a queue.

    spark.readStream.format("krafka-share")
        .option("kafka.bootstrap.servers", "host:9092").option("kafka.group.id", "workers")
        .option("subscribe", "jobs").load()

Rows: Spark's Kafka source row (`key, value, topic, partition, offset, timestamp,
timestampType`, `headers` with `includeHeaders`) plus `deliveryCount` (1 the first time a
record is delivered, one more each time it comes back).

Semantics, at least once:
- The query's driver is one member of the share group (one explicit-acknowledgement share
  consumer, in the process where Spark plans the query's micro-batches). Each trigger it
  acquires up to `maxRecordsPerTrigger` records (waiting up to `pollTimeoutMs` for some); they
  become the next micro-batch, handed to the executors with its plan. A trigger that acquires
  nothing plans no batch.
- A record is ACCEPTed (gone from the queue for good) only once its micro-batch has completed
  (its sink committed): at the next trigger (Spark asks for the next batch only then) or when
  Spark commits the batch, whichever comes first.
- A micro-batch that fails stops the query: its records are released as the member leaves,
  and the share group hands them out again, to this query once restarted or to any other
  member, with `deliveryCount` one higher. A query that dies without stopping leaves them
  locked until the group's record lock (`share.record.lock.duration.ms`, 30 s by default)
  runs out; then the same happens. A micro-batch must finish within that lock.
- A restarted query does not replay the batch that failed (no share group can hand the same
  records to it again on request): its checkpoint's pending batch is run empty, and the
  records come back through redelivery. Records whose batch completed but were not yet
  accepted when the query died are delivered again: duplicates, never losses.
- The group's `share.delivery.count.limit` (5 by default) archives a record delivered that
  many times (a poison record stops coming back).
- `trigger(availableNow=True)` reads until a trigger acquires nothing.

A new share group starts at the latest offset (KIP-932): set the group config
`share.auto.offset.reset=earliest` (krafka's `AdminClient.alter_configs` with
`ConfigResource.group(...)`, or Kafka's `kafka-configs`) to take what the topic holds already.
Options: `kafka.bootstrap.servers` and `kafka.group.id` (required), any other `kafka.*` share
consumer property, `subscribe` (topics, comma-separated), `maxRecordsPerTrigger` (default
10000), `pollTimeoutMs` (default 1000), `numPartitions` (tasks per micro-batch, default 2),
`includeHeaders`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from krafka.errors import ConfigError
from krafka.spark.kafka_options import client_options

log = logging.getLogger(__name__)
NAME = "krafka-share"
_OPTIONS = frozenset(
    {"subscribe", "maxrecordspertrigger", "polltimeoutms", "numpartitions", "includeheaders"}
)


@dataclass(frozen=True, slots=True)
class ShareOptions:
    client: Mapping[str, str]
    topics: tuple[str, ...]
    max_records: int = 10_000
    poll_timeout: float = 1.0
    partitions: int = 2
    include_headers: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ShareOptions:
        o = {k.lower(): v for k, v in options.items()}
        unknown = sorted(k for k in o if not k.startswith("kafka.") and k not in _OPTIONS)
        if unknown:
            raise ConfigError(f"krafka-share source: unknown option {unknown[0]!r}")
        client = client_options(options, "share_consumer")
        if not client.get("group.id"):
            raise ConfigError("option kafka.group.id (the share group) is required")
        topics = tuple(t.strip() for t in o.get("subscribe", "").split(",") if t.strip())
        if not topics:
            raise ConfigError("option subscribe (the topics) is required")
        headers = o.get("includeheaders", "false").strip().lower()
        if headers not in ("true", "false"):
            raise ConfigError(f"option includeHeaders: expected true or false, not {headers!r}")
        return cls(
            client=client,
            topics=topics,
            max_records=_positive(o, "maxrecordspertrigger", 10_000),
            poll_timeout=_positive(o, "polltimeoutms", 1000) / 1000,
            partitions=_positive(o, "numpartitions", 2),
            include_headers=headers == "true",
        )


def _positive(o: Mapping[str, str], key: str, default: int) -> int:
    raw = o.get(key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"option {key}: expected an integer, not {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"option {key}: must be positive, not {value}")
    return value


def share_schema(include_headers: bool) -> Any:
    from pyspark.sql.types import IntegerType, StructField, StructType

    from krafka.spark.kafka_read import spark_schema

    fields = list(spark_schema(include_headers).fields)
    return StructType([*fields, StructField("deliveryCount", IntegerType())])


def share_rows(records: Sequence[Any], include_headers: bool) -> Any:
    """`ShareRecord`s as one Arrow batch of the source's rows."""
    import pyarrow as pa

    from krafka.arrow import kafka_schema

    base = kafka_schema(include_headers)
    columns: dict[str, Any] = {
        "key": [r.key for r in records],
        "value": [r.value for r in records],
        "topic": [r.topic for r in records],
        "partition": [r.partition for r in records],
        "offset": [r.offset for r in records],
        "timestamp": [None if r.timestamp is None else r.timestamp * 1000 for r in records],
        "timestampType": [r.timestamp_type for r in records],
    }
    if include_headers:
        columns["headers"] = [
            [{"key": k, "value": v} for k, v in r.headers] if r.headers else None for r in records
        ]
    arrays = [pa.array(columns[f.name], f.type) for f in base]
    arrays.append(pa.array([r.delivery_count for r in records], pa.int32()))
    names = [*base.names, "deliveryCount"]
    return pa.RecordBatch.from_arrays(arrays, names=names)


class BatchPartition(InputPartition):
    """One task's share of a micro-batch: its rows travel with the plan."""

    def __init__(self, rows: Any) -> None:
        super().__init__(None)
        self.rows = rows

    def __repr__(self) -> str:
        return f"BatchPartition({self.rows.num_rows} rows)"


class ShareSource(DataSource):
    """`format("krafka-share")`: streaming reads through a share group (module docs)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> Any:
        include = str(self.options.get("includeHeaders", "false")).lower() == "true"
        return share_schema(include)

    def reader(self, schema: Any) -> DataSourceReader:
        raise ConfigError(
            "krafka-share is a streaming source (records are acknowledged when a micro-batch "
            "commits): use spark.readStream"
        )

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return ShareStreamReader(ShareOptions.parse(self.options))


class ShareStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are micro-batch numbers, `{"batch": n}`; batch n's records are held here,
    acquired and unacknowledged, until Spark is done with them."""

    def __init__(self, options: ShareOptions) -> None:
        self.options = options
        self.held: dict[int, list[Any]] = {}
        self._consumer: Any = None

    def _member(self) -> Any:
        if self._consumer is None:
            from krafka.sync import ShareConsumer

            consumer = ShareConsumer.from_config(
                dict(self.options.client),
                acknowledgement_mode="explicit",
                max_poll_records=self.options.max_records,
            )
            consumer.subscribe(list(self.options.topics))
            self._consumer = consumer
            _stop_on_sigterm()
        return self._consumer

    def initialOffset(self) -> dict[str, Any]:
        return {"batch": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        """Nothing to fix in advance: a queue has no end offset; the query ends at the first
        trigger that acquires nothing."""

    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, Any]:
        done = int(start["batch"])
        self._accept(done)  # Spark plans a batch only once the one before it completed
        records = self._member().poll(self.options.poll_timeout, self.options.max_records)
        if not records:
            return {"batch": done}
        self.held[done + 1] = records
        return {"batch": done + 1}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        records = self.held.get(int(end["batch"]))
        if not records:  # planned before a restart: released then, and delivered again
            return []
        rows = share_rows(records, self.options.include_headers)
        step = -(-rows.num_rows // self.options.partitions)
        return [BatchPartition(rows.slice(i, step)) for i in range(0, rows.num_rows, step)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if isinstance(partition, BatchPartition):
            yield partition.rows

    def commit(self, end: dict[str, Any]) -> None:
        self._accept(int(end["batch"]))

    def stop(self) -> None:
        """Leave the group: what is held and not accepted is released for redelivery."""
        consumer, self._consumer = self._consumer, None
        self.held.clear()
        if consumer is not None:
            consumer.close()

    def _accept(self, through: int) -> None:
        """ACCEPT every record of batches up to `through` (completed) and wait for the brokers."""
        from krafka import AcknowledgeType

        done = [n for n in self.held if n <= through]
        if not done:
            return
        consumer = self._member()
        for n in sorted(done):
            for record in self.held.pop(n):
                consumer.acknowledge(record, AcknowledgeType.ACCEPT)
        refused = {tp: e for tp, e in consumer.commit_sync().items() if e is not None}
        if refused:  # their locks ran out: the group hands them out again (at least once)
            log.warning("krafka-share: acknowledgements refused, records come again: %s", refused)


def _stop_on_sigterm() -> None:
    """Spark stops a query's source by SIGTERM to the Python process running this reader, which
    would die with the records it holds still locked (for the group's whole lock duration).
    Raised as `SystemExit` in the main thread, waiting on Spark's socket, the signal runs
    PySpark's `finally: reader.stop()`, and the member releases them as it leaves."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def leave(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, leave)


__all__ = ["ShareSource", "ShareStreamReader", "share_rows", "share_schema"]
