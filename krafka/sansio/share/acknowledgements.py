"""How a share consumer settles the records it was given (KIP-932), and how settlements travel.

`AcknowledgeType` is Java's: ACCEPT (processed), RELEASE (give it to someone, delivery count
kept), REJECT (never deliver again), RENEW (still working: extend the acquisition lock,
KIP-1222, ShareFetch/ShareAcknowledge v2). On the wire a fifth type, GAP (0), settles acquired
offsets the broker sent no record for (control records, compacted-away offsets).

`ack_batches` turns `{offset: type}` into the wire's AcknowledgementBatches: runs of consecutive
offsets, with one type for a run that has only one type and a type per offset otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

GAP: Final = 0


class AcknowledgeType(IntEnum):
    """Java's AcknowledgeType, with its wire values."""

    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4

    @classmethod
    def parse(cls, value: AcknowledgeType | int | str) -> AcknowledgeType:
        if isinstance(value, str):
            try:
                return cls[value.upper()]
            except KeyError:
                raise ValueError(f"unknown acknowledge type {value!r}") from None
        return cls(value)


@dataclass(frozen=True, slots=True)
class AckBatch:
    """One AcknowledgementBatch: offsets `first`..`last` and their type(s)."""

    first: int
    last: int
    types: tuple[int, ...]

    def offsets(self) -> Iterator[tuple[int, int]]:
        """(offset, type) for every offset of the batch."""
        for index, offset in enumerate(range(self.first, self.last + 1)):
            yield offset, self.types[0] if len(self.types) == 1 else self.types[index]


def ack_batches(acks: Mapping[int, int]) -> list[AckBatch]:
    """`{offset: type}` as wire batches, in offset order."""
    batches: list[AckBatch] = []
    run: list[tuple[int, int]] = []
    for offset in sorted(acks):
        if run and offset != run[-1][0] + 1:
            batches.append(_batch(run))
            run = []
        run.append((offset, acks[offset]))
    if run:
        batches.append(_batch(run))
    return batches


def _batch(run: list[tuple[int, int]]) -> AckBatch:
    types = tuple(t for _, t in run)
    if len(set(types)) == 1:
        types = types[:1]
    return AckBatch(run[0][0], run[-1][0], types)


__all__ = ["GAP", "AckBatch", "AcknowledgeType", "ack_batches"]
