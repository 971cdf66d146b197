"""The codec reads Apache Kafka's own segment files exactly as Kafka's DumpLogSegments does:
every codec, transaction markers, a compacted and cleaned log (see `tests/_kafka_log.py`)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from krafka.arrow import decode_to_arrow
from tests._kafka_log import (
    CODECS,
    COMPACTED,
    LOG_APPEND_TIME_CODEC,
    KafkaLog,
    batch_fields,
    codec_topic,
    record_view,
)
from tests._kafka_log import kafka_log as write_kafka_log

TOPICS = [*map(codec_topic, CODECS), COMPACTED]


@pytest.fixture(scope="session")
def kafka_log(kafka_clusters: Any, tmp_path_factory: pytest.TempPathFactory) -> KafkaLog:
    return write_kafka_log(kafka_clusters, tmp_path_factory)


@pytest.mark.parametrize("topic", TOPICS)
def test_batches_and_records_match_dump_log_segments(
    codec: ModuleType, kafka_log: KafkaLog, topic: str
) -> None:
    for path in kafka_log.segments(topic):
        dumped = kafka_log.dumps[path].batches
        batches = codec.decode_batches(path.read_bytes())
        assert len(batches) == len(dumped), path.name
        position = 0
        for batch, java in zip(batches, dumped, strict=True):
            assert batch_fields(batch, position) == java.fields
            assert [record_view(batch, r) for r in batch.records] == java.records
            position += batch.batch_length + 12


@pytest.mark.parametrize("topic", TOPICS)
def test_records_are_what_the_producers_sent(
    codec: ModuleType, kafka_log: KafkaLog, topic: str
) -> None:
    sent = kafka_log.sent[topic]
    seen = 0
    for path in kafka_log.segments(topic):
        for batch in codec.decode_batches(path.read_bytes()):
            for record in [] if batch.is_control else batch.records:
                want = sent[record.offset]
                stamp = batch.max_timestamp if topic == codec_topic(LOG_APPEND_TIME_CODEC) else (
                    want.timestamp)  # fmt: skip
                assert (record.key, record.value, list(record.headers), record.timestamp) == (
                    want.key, want.value, list(want.headers), stamp)  # fmt: skip
                seen += 1
    assert seen == len(sent) if topic != COMPACTED else 0 < seen < len(sent)


def _partition_bytes(kafka_log: KafkaLog, topic: str) -> bytes:
    return b"".join(p.read_bytes() for p in kafka_log.segments(topic))


@pytest.mark.parametrize("implementation", ["compiled", "pure"])
@pytest.mark.parametrize("topic", TOPICS)
def test_read_committed_drops_what_kafka_indexed_as_aborted(
    kafka_log: KafkaLog, topic: str, implementation: str
) -> None:
    buf = _partition_bytes(kafka_log, topic)
    table = decode_to_arrow(buf, read_committed=True, implementation=implementation)
    assert table.column("offset").to_pylist() == kafka_log.committed_offsets(topic)
    assert kafka_log.aborted(topic)


def test_the_cleaner_ran_before_the_copy(kafka_log: KafkaLog) -> None:
    """The compacted log lost superseded values, the first round's tombstone and aborted data."""
    java = [r for b in kafka_log.batches(COMPACTED) for r in b.records]
    keys = [r.key for r in java if r.marker is None]
    assert len(keys) == len(set(keys))
    assert "k0" in keys and "a1" not in keys and kafka_log.cleaned_to > 0
    assert any(b.fields["deleteHorizonMs"] != "OptionalLong.empty"
               for b in kafka_log.batches(COMPACTED))  # fmt: skip
    assert any(b.int("count") == 0 for b in kafka_log.batches(COMPACTED))
