"""The checker: compares what was sent and acknowledged with what can be read at the end.

Anomalies (each counted, with the first few examples):

- `lost`: acknowledged (or in a committed transaction) and not readable at the end;
- `misplaced`: readable, but not at the partition and offset its acknowledgement named;
- `duplicated`: one record at two offsets;
- `reordered` / `reordered keys`: one writer's records in one partition / of one key not in
  send order (a key lives in one partition: the second follows from the first, and names keys);
- `unexpected`: read, never sent;
- `aborted read`: read_committed returned a record of an aborted transaction;
- `torn txn`: a transaction of unknown outcome partly visible to read_committed;
- `pipeline missing` / `pipeline duplicated`: an input of the consume-transform-produce pipeline
  not exactly once in its committed output;
- `group skipped`: the group committed past a record it never processed.

Informational, never a violation: `redelivered` (processed twice: a commit was lost or raced a
rebalance, the at-least-once contract), `group unprocessed` (beyond the group's last commit),
`indeterminate` (sends that failed: may or may not be there), `late indeterminate` (such a
record written after records its writer sent later: a request the client gave up on, delivered
by the network afterwards).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from faultkit.history import History, Read, TxnOutcome

VIOLATIONS = (
    "lost",
    "misplaced",
    "duplicated",
    "reordered",
    "reordered keys",
    "unexpected",
    "aborted read",
    "torn txn",
    "pipeline missing",
    "pipeline duplicated",
    "group skipped",
)
INFO = ("redelivered", "group unprocessed", "indeterminate", "late indeterminate")
_EXAMPLES = 5
PIPELINE_PREFIX = b"out|"


@dataclass
class Report:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VIOLATIONS + INFO, 0))
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    totals: dict[str, int] = field(default_factory=dict)

    def add(self, anomaly: str, example: str) -> None:
        self.counts[anomaly] += 1
        if len(self.examples[anomaly]) < _EXAMPLES:
            self.examples[anomaly].append(example)

    @property
    def violations(self) -> dict[str, int]:
        return {k: self.counts[k] for k in VIOLATIONS if self.counts[k]}

    @property
    def ok(self) -> bool:
        return not self.violations

    def format(self) -> str:
        lines = ["  ".join(f"{k}={v}" for k, v in self.totals.items())]
        lines.append("  ".join(f"{k}={self.counts[k]}" for k in VIOLATIONS + INFO))
        for anomaly, examples in self.examples.items():
            if examples:
                lines.append(f"{anomaly}: " + "; ".join(examples))
        return "\n".join(lines)


def check(history: History) -> Report:
    report = Report(totals=history.counts())
    committed = _by_rid(history.committed_reads)
    uncommitted = _by_rid(history.uncommitted_reads)
    _lost(history, committed, uncommitted, report)
    _duplicated(committed, uncommitted, report)
    _reordered(history, history.uncommitted_reads, report)
    _unexpected(history, history.uncommitted_reads, report)
    _transactions(history, committed, report)
    _pipeline(history, committed, uncommitted, report)
    _group(history, history.uncommitted_reads, report)
    report.counts["indeterminate"] = len(history.failed)
    return report


def _by_rid(reads: Iterable[Read]) -> dict[bytes, list[Read]]:
    found: dict[bytes, list[Read]] = defaultdict(list)
    for read in reads:
        if read.value is not None:
            found[read.value].append(read)
    return found


def _lost(
    history: History,
    committed: dict[bytes, list[Read]],
    uncommitted: dict[bytes, list[Read]],
    report: Report,
) -> None:
    for rid, (partition, offset) in history.acked.items():
        sent = history.sent[rid]
        if sent.topic not in history.final_topics:
            continue
        if sent.txn is not None:
            continue  # judged by its transaction's outcome
        reads = uncommitted.get(rid, [])
        if not reads:
            report.add("lost", f"{rid!r} acked at {sent.topic}-{partition}@{offset}")
        elif all((r.partition, r.offset) != (partition, offset) for r in reads):
            where = ", ".join(f"{r.partition}@{r.offset}" for r in reads)
            report.add("misplaced", f"{rid!r} acked at {partition}@{offset}, read at {where}")
        elif rid not in committed:
            report.add("lost", f"{rid!r} (not transactional) missing from read_committed")


def _duplicated(
    committed: dict[bytes, list[Read]], uncommitted: dict[bytes, list[Read]], report: Report
) -> None:
    for rid in uncommitted.keys() | committed.keys():
        reads = uncommitted.get(rid, []) + committed.get(rid, [])
        places = {(r.topic, r.partition, r.offset) for r in reads}
        if len(places) > 1:
            report.add("duplicated", f"{rid!r} at {sorted(places)}")


def _reordered(history: History, reads: list[Read], report: Report) -> None:
    by_partition: dict[tuple[str, int, str], list[tuple[int, int, bytes]]] = defaultdict(list)
    by_key: dict[tuple[str, bytes | None, str], list[tuple[int, int, bytes]]] = defaultdict(list)
    for read in reads:
        sent = history.sent.get(read.value) if read.value is not None else None
        if sent is None:
            continue
        row = (read.offset, sent.seq, sent.rid)
        by_partition[(read.topic, read.partition, sent.writer)].append(row)
        by_key[(read.topic, read.key, sent.writer)].append(row)
    for (topic, partition, writer), rows in by_partition.items():
        where = f"{topic}-{partition} writer {writer}"
        _inversions(rows, where, "reordered", history.failed, report)
    for (topic, key, writer), rows in by_key.items():
        where = f"{topic} key {key!r} writer {writer}"
        _inversions(rows, where, "reordered keys", history.failed, report)


def _inversions(
    rows: list[tuple[int, int, bytes]],
    where: str,
    anomaly: str,
    failed: dict[bytes, str],
    report: Report,
) -> None:
    """Each record read after one its writer sent later (offset order vs send order). A record
    whose send failed may land anywhere, later ones included (its outcome was unknown, as with
    Java's TimeoutException): counted as `late indeterminate`, never as reordered."""
    rows.sort()
    highest: tuple[int, int, bytes] | None = None
    for offset, seq, rid in rows:
        if highest is not None and seq < highest[1]:
            example = f"{where}: {rid!r}@{offset} after {highest[2]!r}@{highest[0]}"
            if rid in failed:
                if anomaly == "reordered":
                    report.add("late indeterminate", example)
            else:
                report.add(anomaly, example)
        if rid not in failed and (highest is None or seq > highest[1]):
            highest = (offset, seq, rid)


def _unexpected(history: History, reads: list[Read], report: Report) -> None:
    for read in reads:
        value = read.value
        if value is None:
            report.add("unexpected", f"null value at {read.topic}-{read.partition}@{read.offset}")
        elif value.startswith(PIPELINE_PREFIX):
            source = _pipeline_source(value)
            if history.pipeline is None or source is None:
                report.add(
                    "unexpected", f"{value!r} at {read.topic}-{read.partition}@{read.offset}"
                )
        elif value not in history.sent:
            report.add("unexpected", f"{value!r} at {read.topic}-{read.partition}@{read.offset}")


def _transactions(history: History, committed: dict[bytes, list[Read]], report: Report) -> None:
    for name, txn in history.txns.items():
        topic_read = all(history.sent[r].topic in history.final_topics for r in txn.rids)
        if not topic_read:
            continue
        visible = [rid for rid in txn.rids if rid in committed]
        if txn.outcome is TxnOutcome.COMMITTED:
            for rid in txn.rids:
                if rid not in committed:
                    report.add("lost", f"{rid!r} of committed {name} not in read_committed")
        elif txn.outcome is TxnOutcome.ABORTED:
            for rid in visible:
                report.add("aborted read", f"{rid!r} of aborted {name}")
        elif visible and len(visible) != len(txn.rids):
            report.add("torn txn", f"{name}: {len(visible)} of {len(txn.rids)} records visible")
    if history.pipeline is None:
        return
    for value in committed:
        if value.startswith(PIPELINE_PREFIX):
            txn_name = value.rsplit(b"|", 1)[-1].decode()
            if history.pipeline_txns.get(txn_name) is TxnOutcome.ABORTED:
                report.add("aborted read", f"{value!r} of aborted pipeline {txn_name}")


def _pipeline_source(value: bytes) -> bytes | None:
    parts = value.split(b"|")
    return parts[1] if len(parts) == 3 else None


def _pipeline(
    history: History,
    committed: dict[bytes, list[Read]],
    uncommitted: dict[bytes, list[Read]],
    report: Report,
) -> None:
    if history.pipeline is None:
        return
    source, sink = history.pipeline
    if sink not in history.final_topics:
        return
    outputs: Counter[bytes] = Counter()
    for value, reads in committed.items():
        source_rid = _pipeline_source(value) if value.startswith(PIPELINE_PREFIX) else None
        if source_rid is not None:
            outputs[source_rid] += sum(1 for r in reads if r.topic == sink)
    for rid, reads in uncommitted.items():
        if not any(r.topic == source for r in reads):
            continue
        n = outputs.get(rid, 0)
        if n == 0:
            report.add("pipeline missing", f"input {rid!r} has no committed output")
        elif n > 1:
            report.add("pipeline duplicated", f"input {rid!r} in the output {n} times")


def _group(history: History, reads: list[Read], report: Report) -> None:
    if not history.processed:
        return
    seen: Counter[tuple[str, int, int]] = Counter(
        (p.topic, p.partition, p.offset) for p in history.processed
    )
    for (topic, partition, offset), n in seen.items():
        if n > 1:
            report.counts["redelivered"] += n - 1
            if len(report.examples["redelivered"]) < _EXAMPLES:
                report.examples["redelivered"].append(f"{topic}-{partition}@{offset} x{n}")
    topics = {p.topic for p in history.processed}
    for read in reads:
        if read.topic not in topics:
            continue
        done = history.committed.get((read.topic, read.partition), 0)
        if (read.topic, read.partition, read.offset) in seen:
            continue
        if read.offset < done:
            report.add(
                "group skipped",
                f"{read.topic}-{read.partition}@{read.offset} below commit {done}, never processed",
            )
        else:
            report.counts["group unprocessed"] += 1
