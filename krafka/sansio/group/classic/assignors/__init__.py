"""Partition assignors for classic consumer groups, pure and I/O-free.

`range`, `roundrobin`, `sticky` and `cooperative-sticky` follow Java's algorithms (ties broken
as Java breaks them), so a group can mix krafka, Java, librdkafka and kafka-python members and
get the assignment any of their leaders would compute. `PartitionAssignor` is the protocol a
custom assignor implements; `assignors_for` turns a `partition_assignment_strategy` setting
into assignors and `choose_rebalance_protocol` picks EAGER or COOPERATIVE from them.
"""

from krafka.sansio.group.classic.assignors.assignor import (
    NO_GENERATION,
    Assignment,
    Cluster,
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
)
from krafka.sansio.group.classic.assignors.range_assignor import RangeAssignor
from krafka.sansio.group.classic.assignors.registry import (
    BUILT_IN_NAMES,
    assignor_for,
    assignors_for,
    choose_rebalance_protocol,
    lookup_assignor,
    select_group_protocol,
)
from krafka.sansio.group.classic.assignors.roundrobin_assignor import RoundRobinAssignor
from krafka.sansio.group.classic.assignors.sticky_assignor import (
    CooperativeStickyAssignor,
    StickyAssignor,
)
from krafka.sansio.group.classic.assignors.user_data import (
    StickyUserData,
    decode_cooperative_sticky_user_data,
    decode_sticky_user_data,
    encode_cooperative_sticky_user_data,
    encode_sticky_user_data,
)
from krafka.sansio.group.classic.assignors.validation import (
    needs_cooperative_validation,
    validate_cooperative_assignment,
    validate_leader_assignment,
)

__all__ = [
    "BUILT_IN_NAMES",
    "NO_GENERATION",
    "Assignment",
    "Cluster",
    "CooperativeStickyAssignor",
    "PartitionAssignor",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "StickyAssignor",
    "StickyUserData",
    "Subscription",
    "assignor_for",
    "assignors_for",
    "choose_rebalance_protocol",
    "decode_cooperative_sticky_user_data",
    "decode_sticky_user_data",
    "encode_cooperative_sticky_user_data",
    "encode_sticky_user_data",
    "lookup_assignor",
    "needs_cooperative_validation",
    "select_group_protocol",
    "validate_cooperative_assignment",
    "validate_leader_assignment",
]
