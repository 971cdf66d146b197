"""`krafka group ...` and `krafka lag` as subprocesses: against Apache Kafka and Tansu with a
live librdkafka member, against librdkafka's mock cluster, and on Apache Kafka alone what Tansu
cannot answer: log-end offsets of batched records (Tansu's ListOffsets latest answers the last
batch's base offset + 1, right only for one-record batches, so the shared test writes one
record per batch), member details and offsets by time."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from _cli import assert_one_error_line, run_cli
from _members import member, produce, unique

from krafka.cli.groups import format_assignment, print_description
from krafka.sansio.admin.cluster import Node
from krafka.sansio.admin.group_description import GroupDescription, MemberDescription
from krafka.sansio.admin.groups import GroupState, GroupType
from krafka.structs import TopicPartition

pytestmark = [pytest.mark.timeout(180)]


def _one_record_batches(bootstrap: str, topic: str, counts: dict[int, int]) -> None:
    for partition, count in counts.items():
        for _ in range(count):
            produce(bootstrap, topic, {partition: 1})


@pytest.mark.broker
def test_a_group_from_live_to_reset(broker: Any) -> None:
    b, topic, group = broker.bootstrap_servers, unique("cli-grp-t"), unique("cli-grp")
    run_cli("-b", b, "topics", "create", topic, "--partitions", "2")
    _one_record_batches(b, topic, {0: 4, 1: 2})
    with member(b, group, [topic], **{"client.id": "cli-member"}) as m:
        m.wait_assigned()
        m.commit(topic, {0: 1, 1: 2})

        listed = run_cli("-b", b, "group", "list", "--json").json()
        (mine,) = [g for g in listed if g["group"] == group]
        assert mine["type"] == "classic" and mine["protocol_type"] == "consumer"
        described = run_cli("-b", b, "group", "describe", group, "--json").json()
        assert described["state"] == "Stable" and described["type"] == "classic"
        assert len(described["members"]) == 1 and described["coordinator"]["port"] == broker.port
        text = run_cli("-b", b, "group", "describe", group).lines
        node = described["coordinator"]["id"]
        assert text[:2] == [f"Group: {group}", f"Coordinator: broker-{node} (127.0.0.1:{b[10:]})"]
        assert "State: Stable" in text and "Members: 1" in text

        lag = run_cli("-b", b, "lag", group, "--json").json()
        assert lag == [
            {"topic": topic, "partition": 0, "current_offset": 1, "log_end_offset": 4, "lag": 3},
            {"topic": topic, "partition": 1, "current_offset": 2, "log_end_offset": 2, "lag": 0},
        ]
        table = run_cli("-b", b, "lag", group).lines
        assert table[0].split() == ["TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET",
                                    "LAG"]  # fmt: skip
        assert [line.split() for line in table[1:]] == [
            [topic, "0", "1", "4", "3"], [topic, "1", "2", "2", "0"], [topic, "total", "3"],
        ]  # fmt: skip

        refused = run_cli("-b", b, "group", "reset-offsets", group, "--topic", topic,
                          "--to-earliest", "--execute")  # fmt: skip
        assert_one_error_line(refused, f"group {group} is not empty", "stop its consumers")
        deleting = run_cli("-b", b, "group", "delete", group)  # Tansu itself would delete it
        assert_one_error_line(deleting, "not empty", "before deleting it")

    plan = run_cli("-b", b, "group", "reset-offsets", group, "--topic", topic, "--to-latest")
    assert plan.returncode == 0, plan
    assert [line.split() for line in plan.lines] == [
        ["TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"],
        [topic, "0", "1", "4"], [topic, "1", "2", "2"],
    ]  # fmt: skip
    assert "Dry run" in plan.stderr
    assert run_cli("-b", b, "lag", group, "--json").json()[0]["current_offset"] == 1  # unchanged

    for args, want in [
        (["--to-latest"], [4, 2]),
        (["--to-earliest"], [0, 0]),
        (["--shift-by", "3"], [3, 2]),  # kept within the log
        (["--shift-by", "-5"], [0, 0]),
        (["--to-offset", "1"], [1, 1]),
    ]:
        done = run_cli("-b", b, "group", "reset-offsets", group, "--topic", topic, *args,
                       "--execute", "--json")  # fmt: skip
        assert [r["new_offset"] for r in done.json()] == want, args
        lag = run_cli("-b", b, "lag", group, "--json").json()
        assert [r["current_offset"] for r in lag] == want, args

    one = run_cli("-b", b, "group", "reset-offsets", group, "--topic", f"{topic}:1",
                  "--to-earliest", "--execute", "--json").json()  # fmt: skip
    assert one == [{"topic": topic, "partition": 1, "current_offset": 1, "new_offset": 0}]

    deleted = run_cli("-b", b, "group", "delete", group)
    assert deleted.returncode == 0 and deleted.stderr.strip() == f"Deleted group {group}."
    assert run_cli("-b", b, "lag", group, "--json").json() == []


def test_lag_of_batched_records_on_the_mock_cluster(make_mock_cluster: Any) -> None:
    import confluent_kafka

    cluster = make_mock_cluster(3, topics={"orders": 3, "payments": 1})
    b = cluster.bootstrap_servers
    produce(b, "orders", {0: 10, 1: 20, 2: 30})  # many records per batch
    produce(b, "payments", {0: 5})
    consumer = confluent_kafka.Consumer({"bootstrap.servers": b, "group.id": "g"})
    consumer.commit(
        offsets=[confluent_kafka.TopicPartition("orders", 0, 4),
                 confluent_kafka.TopicPartition("orders", 1, 20),
                 confluent_kafka.TopicPartition("payments", 0, 1)],
        asynchronous=False,
    )  # fmt: skip
    consumer.close()
    # the mock cannot list all of a group's offsets (it answers a null array, which the
    # schema forbids): the command says to name the topics, and with them it works
    assert_one_error_line(run_cli("-b", b, "lag", "g"), "every offset of group g", "--topic")
    lag = run_cli("-b", b, "lag", "g", "--topic", "orders", "--topic", "payments", "--json")
    assert lag.json() == [
        {"topic": "orders", "partition": 0, "current_offset": 4, "log_end_offset": 10, "lag": 6},
        {"topic": "orders", "partition": 1, "current_offset": 20, "log_end_offset": 20, "lag": 0},
        {"topic": "orders", "partition": 2, "current_offset": None, "log_end_offset": 30,
         "lag": None},
        {"topic": "payments", "partition": 0, "current_offset": 1, "log_end_offset": 5, "lag": 4},
    ]  # fmt: skip
    table = run_cli("-b", b, "lag", "g", "--topic", "orders", "--topic", "payments").lines
    assert [line.split() for line in table[1:]] == [
        ["orders", "0", "4", "10", "6"], ["orders", "1", "20", "20", "0"],
        ["orders", "2", "-", "30", "-"], ["orders", "total", "6"],
        ["payments", "0", "1", "5", "4"], ["payments", "total", "4"],
    ]  # fmt: skip
    reset = run_cli("-b", b, "group", "reset-offsets", "g", "--topic", "orders:0,2",
                    "--to-latest", "--execute", "--json")  # fmt: skip
    assert [r["new_offset"] for r in reset.json()] == [10, 30]
    after = run_cli("-b", b, "lag", "g", "--topic", "orders:0,2", "--json").json()
    assert [r["lag"] for r in after] == [0, 0]
    # no DescribeGroups / ListGroups on the mock: a clear line, not a traceback
    assert_one_error_line(run_cli("-b", b, "group", "list"), "LIST_GROUPS")
    assert_one_error_line(run_cli("-b", b, "group", "describe", "g"), "DESCRIBE_GROUPS")


def test_describe_shows_members_and_assignments(capsys: pytest.CaptureFixture[str]) -> None:
    """Neither test broker reports member details (Tansu leaves them out, the mock has no
    DescribeGroups): the rendering of a full description, as Kafka returns it."""
    group = GroupDescription(
        "order-processors", GroupType.CLASSIC, GroupState.STABLE, "consumer", "range",
        Node(2, "10.0.0.3", 9092),
        (
            MemberDescription("c1-uuid", "c1", "/10.0.0.7",
                              assignment=tuple(TopicPartition("orders", p) for p in (2, 0, 1))),
            MemberDescription("c2-uuid", "c2", "/10.0.0.8", group_instance_id="host-b",
                              assignment=(TopicPartition("orders", 3), TopicPartition("x", 0))),
        ),
    )  # fmt: skip
    print_description(group)
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert lines[:6] == [
        "Group: order-processors", "Coordinator: broker-2 (10.0.0.3:9092)", "State: Stable",
        "Type: classic", "Protocol: range", "Members: 2",
    ]  # fmt: skip
    assert [line.split() for line in lines[6:]] == [
        ["MEMBER-ID", "CLIENT-ID", "HOST", "INSTANCE-ID", "ASSIGNMENT"],
        ["c1-uuid", "c1", "/10.0.0.7", "-", "orders:0,1,2"],
        ["c2-uuid", "c2", "/10.0.0.8", "host-b", "orders:3", "x:0"],
    ]
    assert format_assignment([]) is None


def test_on_kafka_members_batched_lag_and_resets_by_time(kafka: Any) -> None:
    """What only a real broker answers: member details, log-end offsets of batched records,
    offsets by time (`--to-datetime`, a time past every record resetting to the end)."""
    b, topic, group = kafka.bootstrap_servers, unique("cli-kgrp-t"), unique("cli-kgrp")
    run_cli("-b", b, "topics", "create", topic, "--partitions", "2")
    base = produce(b, topic, {0: 10, 1: 6})  # many records per batch
    with member(b, group, [topic], **{"client.id": "cli-kmember"}) as m:
        m.wait_assigned()
        m.commit(topic, {0: 3})
        listed = run_cli("-b", b, "group", "list", "--type", "classic", "--state", "Stable",
                         "--json").json()  # fmt: skip
        assert group in [g["group"] for g in listed]
        (described,) = run_cli("-b", b, "group", "describe", group, "--json").json()["members"]
        assert described["client_id"] == "cli-kmember" and described["client_host"] == "/127.0.0.1"
        assert described["assignment"] == [{"topic": topic, "partition": p} for p in (0, 1)]
        lag = run_cli("-b", b, "lag", group, "--json").json()
        assert [(r["current_offset"], r["log_end_offset"], r["lag"]) for r in lag] == [
            (3, 10, 7), (None, 6, None),
        ]  # fmt: skip

    def at(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat()

    for args, want in [
        (["--to-datetime", at(base + 4)], [4, 4]),
        (["--to-datetime", at(base + 7)], [7, 6]),  # no record of partition 1 that late: its end
    ]:
        done = run_cli("-b", b, "group", "reset-offsets", group, "--topic", topic, *args,
                       "--execute", "--json")  # fmt: skip
        assert [r["new_offset"] for r in done.json()] == want, args
    assert [r["lag"] for r in run_cli("-b", b, "lag", group, "--json").json()] == [3, 0]
