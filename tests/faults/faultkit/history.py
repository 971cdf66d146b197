"""What the workloads did and saw: every record sent (with its writer and send order), every
acknowledgement, every transaction's outcome, what the consumer group processed and committed,
and the final reads of every partition. The checker judges only this."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from enum import Enum


class TxnOutcome(Enum):
    COMMITTED = "committed"  # commit_transaction returned
    ABORTED = "aborted"  # abort_transaction returned before any commit was attempted
    UNKNOWN = "unknown"  # the commit (or the abort after it) failed: either, but all or nothing


@dataclass(frozen=True, slots=True)
class Sent:
    """One record handed to `Producer.send`: `rid` (its value) is unique in a run."""

    rid: bytes
    topic: str
    key: bytes
    writer: str
    seq: int
    txn: str | None = None


@dataclass(frozen=True, slots=True)
class Read:
    """One record of a final read."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True, slots=True)
class Processed:
    """A record a group member handed to the application."""

    member: str
    topic: str
    partition: int
    offset: int
    value: bytes | None


@dataclass
class Txn:
    rids: list[bytes] = field(default_factory=list)
    outcome: TxnOutcome | None = None


@dataclass
class History:
    sent: dict[bytes, Sent] = field(default_factory=dict)
    acked: dict[bytes, tuple[int, int]] = field(default_factory=dict)
    failed: dict[bytes, str] = field(default_factory=dict)
    txns: dict[str, Txn] = field(default_factory=dict)
    processed: list[Processed] = field(default_factory=list)
    #: The last acknowledged group commit per (topic, partition).
    committed: dict[tuple[str, int], int] = field(default_factory=dict)
    commit_failures: int = 0
    #: Pipeline: its input and output topics; outputs are `out|<input rid>`.
    pipeline: tuple[str, str] | None = None
    pipeline_txns: dict[str, TxnOutcome] = field(default_factory=dict)
    committed_reads: list[Read] = field(default_factory=list)
    uncommitted_reads: list[Read] = field(default_factory=list)
    #: Topics read in full at the end (their partitions' records are in the reads above).
    final_topics: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def send(self, sent: Sent) -> None:
        self.sent[sent.rid] = sent
        if sent.txn is not None:
            self.txns.setdefault(sent.txn, Txn()).rids.append(sent.rid)

    def ack(self, rid: bytes, partition: int, offset: int) -> None:
        self.acked[rid] = (partition, offset)

    def fail(self, rid: bytes, error: BaseException) -> None:
        self.failed[rid] = f"{type(error).__name__}: {error}"

    def txn_outcome(self, txn: str, outcome: TxnOutcome) -> None:
        self.txns.setdefault(txn, Txn()).outcome = outcome

    def group_commit(self, offsets: dict[tuple[str, int], int]) -> None:
        for tp, offset in offsets.items():
            self.committed[tp] = max(offset, self.committed.get(tp, 0))

    def counts(self) -> dict[str, int]:
        outcomes: dict[str, int] = defaultdict(int)
        for txn in self.txns.values():
            outcomes[txn.outcome.value if txn.outcome else "open"] += 1
        return {
            "sent": len(self.sent),
            "acked": len(self.acked),
            "failed": len(self.failed),
            "processed": len(self.processed),
            **{f"txn {k}": v for k, v in sorted(outcomes.items())},
            "pipeline txns": len(self.pipeline_txns),
            "read committed": len(self.committed_reads),
            "read uncommitted": len(self.uncommitted_reads),
        }
