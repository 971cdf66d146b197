"""Record Java's assignments for random scenarios (development tool).

    python tools/assignor_oracle/golden.py OUT.json[.gz] [CASES_PER_ASSIGNOR] [SEED]

Builds the oracle (`build.py`: against the real kafka-clients jar), then for each assignor plays
random groups through several rebalances: members join, leave and change subscriptions; sticky
members send their previous assignment as user data, cooperative members their owned partitions
and generation, sometimes stale or conflicting. Every round's input is derived from *Java's* previous answer, and every
round is stored with Java's answer; `tests/sansio/group/classic/assignors/test_java_golden.py` checks
krafka computes exactly the same (member lists in Java's order).
"""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from build import build, command  # noqa: E402

from krafka.sansio.group.classic.assignors.user_data import (  # noqa: E402
    encode_cooperative_sticky_user_data,
    encode_sticky_user_data,
)
from krafka.structs import TopicPartition  # noqa: E402

RACKS = ["a", "b", "c", "d"]
Case = dict[str, Any]


class Oracle:
    """The Java oracle process: `run(case)` fills in Java's answer."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def run(self, case: Case) -> Case:
        assert self.proc.stdin and self.proc.stdout
        lines = [f"S {case['assignor']}"]
        lines += [f"T {t} {n}" for t, n in case["topics"].items()]
        lines += [f"R {t} {p} {','.join(r) or '-'}" for t, p, r in case["racks"]]
        for member, instance, rack, generation, user_data, topics, owned in case["members"]:
            data = "-" if user_data is None else (user_data or "=")
            owned_text = ",".join(f"{t}#{p}" for t, p in owned) or "-"
            lines.append(
                f"M {member} {instance or '-'} {rack or '-'} {generation} {data} "
                f"{','.join(topics) or '-'} {owned_text}"
            )
        lines.append("E")
        self.proc.stdin.write("\n".join(lines) + "\n")
        self.proc.stdin.flush()
        expected: dict[str, list[list[Any]]] = {}
        while (line := self.proc.stdout.readline().strip()) != "D":
            kind, *rest = line.split(" ")
            if kind == "F":
                case["error"] = rest[0]
                continue
            member, text = rest
            expected[member] = [] if text == "-" else [_tp(item) for item in text.split(",")]
        case["expected"] = expected
        return case


def _tp(item: str) -> list[Any]:
    topic, partition = item.rsplit("#", 1)
    return [topic, int(partition)]


def _member_id(rng: random.Random) -> str:
    return f"consumer-{rng.randrange(1, 9)}-{rng.getrandbits(40):010x}"


def _topics(rng: random.Random) -> dict[str, int]:
    names = rng.sample(["orders", "t1", "t2", "payments", "logs", "x"], rng.randint(1, 4))
    return {name: rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 12]) if rng.random() < 0.1 else
            rng.randint(1, 12) for name in names}


def _racks(rng: random.Random, topics: dict[str, int]) -> list[list[Any]]:
    if rng.random() < 0.6:
        return []
    width = rng.randint(1, 3)
    out = []
    for topic, count in topics.items():
        for p in range(count):
            racks = sorted(rng.sample(RACKS[:3], width)) if rng.random() < 0.95 else []
            out.append([topic, p, racks])
    return out


class Group:
    """A group's members and what each was last given, across rounds."""

    def __init__(self, rng: random.Random, assignor: str) -> None:
        self.rng = rng
        self.assignor = assignor
        self.topics = _topics(rng)
        self.racks = _racks(rng, self.topics)
        self.uniform = rng.random() < 0.6
        self.with_racks = bool(self.racks) and rng.random() < 0.8
        self.members: dict[str, dict[str, Any]] = {}
        self.generation = 0
        for _ in range(rng.randint(1, 7)):
            self.join()

    def _subscription(self) -> list[str]:
        topics = list(self.topics)
        if self.uniform:
            return topics
        picked = self.rng.sample(topics, self.rng.randint(1, len(topics)))
        if self.rng.random() < 0.1:
            picked.append("missing")
        return picked

    def join(self) -> None:
        rng = self.rng
        member = _member_id(rng)
        self.members[member] = {
            "instance": f"instance-{rng.randrange(100)}" if rng.random() < 0.2 else None,
            "rack": rng.choice(RACKS) if self.with_racks and rng.random() < 0.9 else None,
            "topics": self._subscription(),
            "owned": [],
            "generation": -1,
        }

    def mutate(self) -> None:
        rng = self.rng
        action = rng.random()
        if action < 0.35 or len(self.members) <= 1:
            for _ in range(rng.randint(1, 3)):
                self.join()
        elif action < 0.65:
            for member in rng.sample(list(self.members), rng.randint(1, len(self.members) - 1)):
                del self.members[member]
        elif action < 0.8 and not self.uniform:
            member = rng.choice(list(self.members))
            self.members[member]["topics"] = self._subscription()
        elif action < 0.9:
            member = rng.choice(list(self.members))
            self.members[member]["generation"] = max(-1, self.generation - rng.randint(1, 3))
        else:
            first, second = rng.sample(list(self.members), 2) if len(self.members) > 1 else (
                list(self.members) * 2
            )
            stolen = self.members[first]["owned"][:2]
            self.members[second]["owned"] = self.members[second]["owned"] + stolen

    def case(self) -> Case:
        rows = []
        for member, m in self.members.items():
            owned = [TopicPartition(t, p) for t, p in m["owned"]]
            generation = m["generation"]
            if self.assignor == "sticky":
                data = None
                if generation >= 0 or owned:
                    data = encode_sticky_user_data(owned, generation).hex()
                wire_owned: list[TopicPartition] = []
            elif self.assignor == "cooperative-sticky":
                data = encode_cooperative_sticky_user_data(generation).hex()
                wire_owned = owned
                if self.rng.random() < 0.1:
                    generation, data = -1, ("" if self.rng.random() < 0.5 else data)
            else:
                data, wire_owned = None, []
            rows.append(
                [member, m["instance"], m["rack"], generation, data, m["topics"],
                 [[tp.topic, tp.partition] for tp in wire_owned]]
            )
        self.rng.shuffle(rows)
        return {"assignor": self.assignor, "topics": self.topics, "racks": self.racks,
                "members": rows}

    def apply(self, expected: dict[str, list[list[Any]]]) -> None:
        self.generation += 1
        for member, partitions in expected.items():
            self.members[member]["owned"] = [list(tp) for tp in partitions]
            self.members[member]["generation"] = self.generation


def play(oracle: Oracle, rng: random.Random, assignor: str, cases: list[Case]) -> None:
    group = Group(rng, assignor)
    rounds = 1 if assignor in ("range", "roundrobin") else rng.randint(2, 5)
    for _ in range(rounds):
        case = oracle.run(group.case())
        cases.append(case)
        if "error" in case:
            return
        group.apply(case["expected"])
        if rng.random() < 0.7:
            group.mutate()


def record(oracle: Oracle, rng: random.Random, per_assignor: int) -> list[Case]:
    """At least `per_assignor` rounds of each assignor, with Java's answers."""
    cases: list[Case] = []
    for assignor in ("range", "roundrobin", "sticky", "cooperative-sticky"):
        start = len(cases)
        while len(cases) - start < per_assignor:
            play(oracle, rng, assignor, cases)
    return cases


def main() -> None:
    out = Path(sys.argv[1])
    per_assignor = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    oracle = Oracle(command(build()))
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20240611
    cases = record(oracle, random.Random(seed), per_assignor)
    oracle.close()
    text = json.dumps(cases, separators=(",", ":")) + "\n"
    if out.suffix == ".gz":
        out.write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        out.write_text(text)
    print(f"{len(cases)} cases -> {out}")


if __name__ == "__main__":
    main()
