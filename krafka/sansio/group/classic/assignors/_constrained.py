"""The sticky assignment when every member subscribes to the same topics (Java's
`ConstrainedAssignmentBuilder`).

With P partitions and C members each member gets `floor(P/C)` (minQuota) or `ceil(P/C)`
(maxQuota) partitions, exactly `P mod C` of them maxQuota:
1. Members keep their owned partitions (in partition, then topic order) up to their quota:
   all if under minQuota, maxQuota while maxQuota slots remain, else minQuota. With racks,
   only owned partitions on the member's rack are kept.
2. With racks, unassigned partitions go round-robin to members still under quota on a rack
   holding a replica.
3. The rest go round-robin to members under minQuota, then to those at minQuota while
   maxQuota slots remain.
A partition taken from its previous owner (or claimed twice in one generation) is recorded in
`transferring`, which the cooperative assignor withholds for a round.
"""

from __future__ import annotations

from collections.abc import Mapping

from krafka.errors import InvalidStateError
from krafka.sansio.group.classic.assignors._java import java_key
from krafka.sansio.group.classic.assignors._sticky_common import RackInfo
from krafka.structs import TopicPartition


class ConstrainedBuilder:
    __slots__ = (
        "assignment",
        "current_over",
        "exact",
        "expected_over",
        "max_quota",
        "maybe_revoked",
        "min_quota",
        "multiply_owned",
        "owned",
        "partitions_per_topic",
        "racks",
        "transferring",
        "under",
    )

    def __init__(
        self,
        partitions_per_topic: Mapping[str, int],
        racks: RackInfo,
        owned: Mapping[str, list[TopicPartition]],
        multiply_owned: set[TopicPartition],
    ) -> None:
        self.partitions_per_topic = partitions_per_topic
        self.racks = racks
        self.owned = owned
        self.multiply_owned = multiply_owned
        total = sum(partitions_per_topic.values())
        members = len(owned)
        self.min_quota = total // members
        self.max_quota = -(-total // members)
        self.expected_over = total % members
        self.current_over = 0
        self.assignment: dict[str, list[TopicPartition]] = {m: [] for m in owned}
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.transferring: dict[TopicPartition, str] = {}
        self.under: list[str] = []
        self.exact: list[str] = []

    def build(self) -> dict[str, list[TopicPartition]]:
        assigned = self._assign_owned()
        unassigned = self._unassigned(assigned)
        self.under.sort(key=java_key)
        self.exact.sort(key=java_key)
        unassigned = self.racks.sort_by_rack_consumers(unassigned)
        unassigned = self._assign_rack_aware_round_robin(unassigned)
        self._assign_round_robin(unassigned)
        self._verify_unfilled()
        return self.assignment

    def _kept_owned(self, member: str, claims: list[TopicPartition]) -> list[TopicPartition]:
        kept = []
        for tp in claims:
            if self.racks.mismatch(member, tp):
                self.maybe_revoked[tp] = member
            else:
                kept.append(tp)
        kept.sort(key=lambda tp: (tp.partition, java_key(tp.topic)))
        for tp in self.multiply_owned:
            if tp in kept:
                kept.remove(tp)
        return kept

    def _keep(self, member: str, kept: list[TopicPartition], quota: int) -> list[TopicPartition]:
        self.assignment[member].extend(kept[:quota])
        for tp in kept[quota:]:
            self.maybe_revoked[tp] = member
        return kept[:quota]

    def _assign_owned(self) -> set[TopicPartition]:
        assigned: set[TopicPartition] = set()
        for member, claims in self.owned.items():
            kept = self._kept_owned(member, claims)
            if len(kept) < self.min_quota:
                assigned.update(self._keep(member, kept, len(kept)))
                self.under.append(member)
            elif len(kept) >= self.max_quota and self.current_over < self.expected_over:
                self.current_over += 1
                if self.current_over == self.expected_over:
                    self.exact.clear()
                assigned.update(self._keep(member, kept, self.max_quota))
            else:
                assigned.update(self._keep(member, kept, self.min_quota))
                if self.current_over < self.expected_over:
                    self.exact.append(member)
        return assigned

    def _unassigned(self, assigned: set[TopicPartition]) -> list[TopicPartition]:
        return [
            tp
            for topic in sorted(self.partitions_per_topic, key=java_key)
            for p in range(self.partitions_per_topic[topic])
            if (tp := TopicPartition(topic, p)) not in assigned
        ]

    def _assign_rack_aware_round_robin(
        self, unassigned: list[TopicPartition]
    ) -> list[TopicPartition]:
        if not self.racks.consumer_racks:
            return unassigned
        remaining = []
        next_index = 0
        for tp in unassigned:
            member = None
            index = self.racks.next_rack_consumer(tp, self.under, next_index)
            if index >= 0:
                member = self.under[index]
                count = len(self.assignment[member]) + 1
                if count >= self.min_quota:
                    self.under.remove(member)
                    if count < self.max_quota and self.current_over < self.expected_over:
                        self.exact.append(member)
                else:
                    index += 1
                next_index = index % len(self.under) if self.under else 0
            elif self.exact:
                first = self.racks.next_rack_consumer(tp, self.exact, 0)
                if first >= 0:
                    member = self.exact[first]
                    if len(self.assignment[member]) + 1 == self.max_quota:
                        del self.exact[first]
                        self.current_over += 1
                        if self.current_over == self.expected_over:
                            self.exact.clear()
            if member is None:
                remaining.append(tp)
            else:
                self._assign_new(tp, member)
        return remaining

    def _assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        position = 0
        last: int | None = None
        for tp in unassigned:
            if position < len(self.under):
                member = self.under[position]
                last = position
                position += 1
            elif not self.under and not self.exact:
                raise InvalidStateError("sticky assignor: no member left to take " + str(tp))
            elif not self.under:
                member = self.exact.pop(0)
                last = None
            else:
                member = self.under[0]
                last, position = 0, 1
            count = self._assign_new(tp, member)
            if count == self.min_quota:
                if last is not None:
                    del self.under[last]
                    position -= 1
                    last = None
                self.exact.append(member)
            elif count == self.max_quota:
                self.current_over += 1

    def _assign_new(self, tp: TopicPartition, member: str) -> int:
        partitions = self.assignment[member]
        partitions.append(tp)
        previous = self.maybe_revoked.get(tp)
        if (previous is not None and previous != member) or tp in self.multiply_owned:
            self.transferring[tp] = member
        return len(partitions)

    def _verify_unfilled(self) -> None:
        if not self.under:
            return
        if self.current_over != self.expected_over:
            raise InvalidStateError(
                "sticky assignor: fewer members than expected reached maxQuota "
                f"({self.current_over} of {self.expected_over})"
            )
        short = [m for m in self.under if len(self.assignment[m]) != self.min_quota]
        if short:
            raise InvalidStateError(f"sticky assignor: members {short} are below minQuota")


__all__ = ["ConstrainedBuilder"]
