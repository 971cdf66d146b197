"""Option parsing and offset-range planning of `format("krafka")`, without Spark or a broker."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krafka.errors import ConfigError
from krafka.spark.kafka_options import EARLIEST, LATEST, SinkOptions, SourceOptions
from krafka.spark.kafka_plan import OffsetRange, cap, split
from krafka.structs import TopicPartition

BOOT = {"kafka.bootstrap.servers": "h:9092"}


def parse(streaming: bool = False, **options: str) -> SourceOptions:
    return SourceOptions.parse({**BOOT, **options}, streaming=streaming)


def test_spark_option_names_parse() -> None:
    o = parse(
        assign=json.dumps({"a": [0, 1]}),
        startingOffsets=json.dumps({"a": {"0": 5, "1": -2}}),
        endingOffsets="latest",
        includeHeaders="true",
        failOnDataLoss="false",
        minPartitions="8",
        **{"kafka.isolation.level": "read_committed", "kafka.client.id": "x"},
    )
    assert o.topics.partitions == (TopicPartition("a", 0), TopicPartition("a", 1))
    assert o.starting.offsets == {TopicPartition("a", 0): 5, TopicPartition("a", 1): EARLIEST}
    assert o.ending.default == LATEST and o.read_committed and o.include_headers
    assert not o.fail_on_data_loss and o.min_partitions == 8
    assert parse(streaming=True, subscribe="a").starting.default == LATEST
    assert parse(subscribe="a").starting.default == EARLIEST
    assert parse(subscribe="a", startingTimestamp="1000").starting.timestamp == 1000


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"subscribe": "a", "startingOffset": "1"}, "unknown option 'startingoffset'"),
        ({"subscribe": "a", "endingOffsets": '{"a": '}, "endingOffsets: malformed JSON"),
        ({"subscribe": "a", "endingOffsets": '{"a": [1]}'}, "endingOffsets: expected"),
        ({"assign": '["a"]'}, "assign: expected a JSON object"),
        ({}, "exactly one of the options"),
        ({"subscribePattern": "("}, "subscribePattern"),
        ({"subscribe": "a", "minPartitions": "0"}, "minpartitions: must be positive"),
        ({"subscribe": "a", "failOnDataLoss": "maybe"}, "failondataloss: expected true"),
        ({"subscribe": "a", "kafka.auto.offset.reset": "x"}, "kafka.auto.offset.reset"),
        ({"subscribe": "a", "kafka.linger.mss": "1"}, "linger.mss"),
        ({"subscribe": "a", "startingTimestamp": "1", "startingOffsets": "earliest"}, "together"),
    ],
)
def test_bad_options_name_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse(**options)


def test_missing_bootstrap_and_streaming_ending_offsets() -> None:
    with pytest.raises(ConfigError, match=r"bootstrap\.servers is required"):
        SourceOptions.parse({"subscribe": "a"}, streaming=False)
    with pytest.raises(ConfigError, match="not allowed in a streaming query"):
        parse(streaming=True, subscribe="a", endingOffsets="latest")
    with pytest.raises(ConfigError, match="unknown option 'bogus'"):
        SinkOptions.parse({**BOOT, "bogus": "1"})


ranges = st.lists(
    st.tuples(st.integers(0, 1000), st.integers(0, 5000)).map(
        lambda t: OffsetRange("t", 0, t[0], t[0] + t[1])
    ),
    min_size=1,
    max_size=6,
).map(lambda rs: [OffsetRange("t", i, r.start, r.end) for i, r in enumerate(rs)])


@given(ranges, st.integers(1, 40))
def test_split_covers_every_offset_once(rs: list[OffsetRange], min_partitions: int) -> None:
    pieces = split(rs, min_partitions)
    for r in rs:
        covered = sorted(
            o for p in pieces if p.partition == r.partition for o in range(p.start, p.end)
        )
        assert covered == list(range(r.start, r.end))
    if sum(r.size for r in rs) >= min_partitions:
        assert len(pieces) >= min(min_partitions, sum(r.size for r in rs)) * 0.5


@given(
    st.dictionaries(st.integers(0, 8), st.tuples(st.integers(0, 100), st.integers(0, 500))),
    st.integers(1, 300),
)
def test_cap_limits_a_micro_batch(spans: dict[int, tuple[int, int]], limit: int) -> None:
    start = {TopicPartition("t", p): a for p, (a, _) in spans.items()}
    latest = {TopicPartition("t", p): a + n for p, (a, n) in spans.items()}
    ends = cap(start, latest, limit)
    moved = sum(ends[tp] - start[tp] for tp in latest)
    assert all(start[tp] <= ends[tp] <= latest[tp] for tp in latest)
    backlog = sum(latest[tp] - start[tp] for tp in latest)
    assert moved == backlog if backlog <= limit else moved <= limit + len(latest)
    assert moved > 0 or backlog == 0
