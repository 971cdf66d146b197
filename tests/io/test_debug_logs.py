"""DEBUG logs against Apache Kafka: one line per request and per answer (API, version,
correlation id, broker, duration, error codes) and the transitions of a group join, for the
classic protocol and KIP-848."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import anyio
import pytest

from krafka import Consumer, Producer
from krafka.io.client import KafkaClient
from krafka.protocol.messages import MetadataRequest
from krafka.protocol.messages.metadata_request import MetadataRequestTopic

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

_RECV = re.compile(
    r"recv (?P<api>\w+) v\d+ correlation_id=(?P<cid>\d+) from [\w.:-]+ \(node (?P<node>-?\d+)\)"
    r" in \d+\.\d ms: (?P<errors>.+)"
)


def _messages(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
async def test_a_group_join_logs_its_requests_and_transitions(
    kafka: Any, protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="krafka")
    topic = group = f"logs-{protocol}-{time.time_ns()}"
    async with Producer(kafka.bootstrap_servers) as producer:
        await producer.send_and_wait(topic, b"x", partition=0)
    async with Consumer(
        kafka.bootstrap_servers, group_id=group, group_protocol=protocol,
        auto_offset_reset="earliest", fetch_max_wait=0.1,
    ) as consumer:  # fmt: skip
        await consumer.subscribe([topic])
        with anyio.fail_after(30):
            while not await consumer.poll(timeout=0.2):
                pass
    wire = _messages(caplog, "krafka.wire")
    answers = [m for m in (_RECV.fullmatch(line) for line in wire) if m]
    apis = {m["api"] for m in answers}
    joined = {"JoinGroup", "SyncGroup"} if protocol == "classic" else {"ConsumerGroupHeartbeat"}
    assert joined | {"Produce", "Metadata", "FindCoordinator", "Fetch"} <= apis
    sent = (re.match(r"send (\w+) v\d+ correlation_id=(\d+)", line) for line in wire)
    sends = {(m[1], m[2]) for m in sent if m}
    assert {(m["api"], m["cid"]) for m in answers} <= sends
    assert all(m["node"] != "-1" for m in answers if m["api"] == "Fetch")
    transitions = _messages(caplog, "krafka.group")
    member = f"group {group!r} member"
    if protocol == "classic":
        expected = [
            f"{member}: UNJOINED -> PREPARING_REBALANCE (JOIN_SENT)",
            f"{member}: PREPARING_REBALANCE -> COMPLETING_REBALANCE (JOINED)",
            f"{member}: COMPLETING_REBALANCE -> STABLE (SYNCED)",
        ]
        assert [t for t in transitions if t in expected] == expected
    else:
        moves = [t.split(": ", 1)[1] for t in transitions if t.startswith(member)]
        assert moves[:2] == ["UNSUBSCRIBED -> JOINING", "JOINING -> RECONCILING"], transitions
        assert "RECONCILING -> ACKNOWLEDGING" in moves and "ACKNOWLEDGING -> STABLE" in moves
    partitions = _messages(caplog, "krafka.consumer")
    assert any(line.startswith(f"partition {topic}-0") and "-> FETCHING" in line
               for line in partitions), partitions  # fmt: skip
    assert "consumer subscription: NONE -> AUTO_TOPICS" in partitions


async def test_the_error_codes_of_an_answer_are_logged(
    kafka: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="krafka.wire")
    missing = [MetadataRequestTopic(name=f"missing-{time.time_ns()}-{i}") for i in range(3)]
    async with KafkaClient(kafka.bootstrap_servers) as client:
        await client.send(MetadataRequest(topics=missing, allow_auto_topic_creation=False))
    answers = [m for m in map(_RECV.fullmatch, _messages(caplog, "krafka.wire")) if m]
    assert "UNKNOWN_TOPIC_OR_PARTITION x3" in [m["errors"] for m in answers]
    assert "ok" in [m["errors"] for m in answers]
