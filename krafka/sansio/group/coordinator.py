"""Where a group's requests go: `Coordinator(group_id)`, which the driver finds, follows and
talks to on a connection of its own. A group machine only reports, once per answer that said
so, that the coordinator moved (`CoordinatorMoved`): the driver cannot always see it (an
OffsetCommit carries the code per partition, an OffsetFetch per group)."""

from __future__ import annotations

from krafka.sansio.actions import Coordinator, CoordinatorMoved, CoordinatorType
from krafka.sansio.codes import COORDINATOR_MOVED_CODES


class GroupCoordinator:
    """The target of every request of group `group_id`, and the moves its answers reported."""

    __slots__ = ("_moved", "target")

    def __init__(self, group_id: str, key_type: CoordinatorType = CoordinatorType.GROUP) -> None:
        self.target = Coordinator(group_id, key_type)
        self._moved = False

    def answered(self, code: int) -> bool:
        """An answer carried `code`; True when it says the coordinator moved (reported)."""
        if code in COORDINATOR_MOVED_CODES:
            self._moved = True
            return True
        return False

    def moved(self) -> None:
        """The coordinator moved (an answer said so in a way `answered` did not see)."""
        self._moved = True

    def actions(self) -> list[CoordinatorMoved]:
        """`CoordinatorMoved` once for every move reported since the last call."""
        if not self._moved:
            return []
        self._moved = False
        return [CoordinatorMoved(self.target.key, self.target.key_type)]


__all__ = ["GroupCoordinator"]
