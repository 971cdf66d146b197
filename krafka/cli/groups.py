"""`krafka group list | describe G | delete G | lag G | reset-offsets G --topic T ...`.

`describe` prints what seed operators expect (group, coordinator, state, members) and each
member's assignment. `delete` and `reset-offsets` refuse a group with active members, as Kafka
does (the CLI checks, since not every broker refuses). `reset-offsets` computes the new
offsets, prints the before/after table, and changes them only with `--execute` (`--dry-run`
is the default). `group lag` is `krafka lag`.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

from krafka.cli.common import add_command, add_json, admin_client, run
from krafka.cli.lag import add_lag_options, run_lag
from krafka.cli.offsets import ResetSpec, add_reset_options, plan_reset, reset_spec
from krafka.cli.output import info, print_fields, print_json, print_table
from krafka.errors import GroupIdNotFoundError, KrafkaError, UnsupportedVersionError
from krafka.io.admin import AdminClient
from krafka.sansio.admin.group_description import GroupDescription, MemberDescription
from krafka.sansio.admin.groups import GroupListing, GroupState
from krafka.structs import TopicPartition

#: States in which a group has no member that could overwrite reset offsets.
INACTIVE = (GroupState.EMPTY, GroupState.DEAD)


def add_parser(subparsers: Any) -> None:
    group = subparsers.add_parser("group", help="consumer groups: list, describe, reset offsets")
    commands = group.add_subparsers(dest="group_command", metavar="COMMAND", required=True)

    listing = add_command(commands, "list", run_list, "list groups with their type and state")
    listing.add_argument("--state", action="append", default=[], help="only groups in STATE")
    listing.add_argument("--type", action="append", default=[], help="classic|consumer|share")
    add_json(listing)

    describe = add_command(commands, "describe", run_describe, "state, coordinator, members")
    describe.add_argument("group", metavar="GROUP")
    add_json(describe)

    delete = add_command(commands, "delete", run_delete, "delete an empty group and its offsets")
    delete.add_argument("group", metavar="GROUP")

    lag = add_command(commands, "lag", run_lag, "a group's lag per partition (as `krafka lag`)")
    add_lag_options(lag)

    reset = add_command(
        commands, "reset-offsets", run_reset, "move an inactive group's committed offsets"
    )
    reset.add_argument("group", metavar="GROUP")
    add_reset_options(reset)
    mode = reset.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="only print the plan (default)")
    mode.add_argument("--execute", action="store_true", help="change the offsets")
    add_json(reset)


# -- list -----------------------------------------------------------------------------------------


def run_list(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with admin_client(args) as admin:
            groups = await admin.list_groups(states=args.state, types=args.type)
        if args.json:
            print_json([_listing_json(g) for g in groups])
        else:
            print_table(
                ("GROUP", "TYPE", "STATE", "PROTOCOL-TYPE"),
                [(g.group_id, _name(g.type), _name(g.state), g.protocol_type) for g in groups],
            )
        return 0

    return run(main)


def _name(value: Any) -> str | None:
    """An enum's value as brokers spell it (`Stable`, `classic`)."""
    return None if value is None else str(value.value)


def _listing_json(group: GroupListing) -> dict[str, Any]:
    return {
        "group": group.group_id,
        "type": _name(group.type),
        "state": _name(group.state),
        "protocol_type": group.protocol_type,
    }


# -- describe -------------------------------------------------------------------------------------


def run_describe(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with admin_client(args) as admin:
            described = (await admin.describe_groups([args.group])).raise_for_errors()
        group = described[args.group]
        if args.json:
            print_json(_description_json(group))
        else:
            print_description(group)
        return 0

    return run(main)


def print_description(group: GroupDescription) -> None:
    """The group's header lines, then one row per member with its assignment."""
    coordinator = group.coordinator
    print_fields(
        [
            ("Group", group.group_id),
            (
                "Coordinator",
                None
                if coordinator is None
                else f"broker-{coordinator.node_id} ({coordinator.host}:{coordinator.port})",
            ),
            ("State", group.state.value),
            ("Type", group.type.value),
            ("Protocol", group.assignor or None),
            ("Members", len(group.members)),
        ]
    )
    if group.members:
        print_table(
            ("MEMBER-ID", "CLIENT-ID", "HOST", "INSTANCE-ID", "ASSIGNMENT"),
            [
                (
                    m.member_id,
                    m.client_id or None,
                    m.client_host or None,
                    m.group_instance_id,
                    format_assignment(m.assignment),
                )
                for m in group.members
            ],
        )


def format_assignment(partitions: Iterable[TopicPartition]) -> str | None:
    """`orders:0,1,2 payments:3`."""
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return " ".join(f"{t}:{','.join(map(str, ps))}" for t, ps in by_topic.items()) or None


def _member_json(member: MemberDescription) -> dict[str, Any]:
    return {
        "member_id": member.member_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "group_instance_id": member.group_instance_id,
        "assignment": [{"topic": t, "partition": p} for t, p in sorted(member.assignment)],
    }


def _description_json(group: GroupDescription) -> dict[str, Any]:
    node = group.coordinator
    return {
        "group": group.group_id,
        "type": group.type.value,
        "state": group.state.value,
        "protocol_type": group.protocol_type,
        "protocol": group.assignor,
        "coordinator": None
        if node is None
        else {"id": node.node_id, "host": node.host, "port": node.port},
        "members": [_member_json(m) for m in group.members],
    }


# -- delete ---------------------------------------------------------------------------------------


def run_delete(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with admin_client(args) as admin:
            await check_inactive(admin, args.group, "deleting it")
            (await admin.delete_groups([args.group])).raise_for_errors()
        info(f"Deleted group {args.group}.")
        return 0

    return run(main)


# -- reset-offsets --------------------------------------------------------------------------------


async def check_inactive(admin: AdminClient, group: str, doing: str) -> None:
    """Refuse a group with members: they would overwrite a reset and lose a deletion's offsets
    (Kafka refuses both; some brokers do not). A cluster without DescribeGroups leaves the
    check to the broker's NON_EMPTY_GROUP."""
    try:
        described = (await admin.describe_groups([group]))[group]
    except UnsupportedVersionError:
        return
    if isinstance(described, GroupIdNotFoundError):
        return
    if isinstance(described, KrafkaError):
        raise described
    if described.members or described.state not in (*INACTIVE, GroupState.UNKNOWN):
        raise ValueError(
            f"group {group} is not empty (state {described.state.value}, "
            f"{len(described.members)} active members): stop its consumers before {doing}"
        )


def run_reset(args: argparse.Namespace) -> int:
    spec: ResetSpec = reset_spec(args, args.group)

    async def main() -> int:
        async with admin_client(args) as admin:
            await check_inactive(admin, args.group, "resetting its offsets")
            plan = await plan_reset(admin, args.group, args.topic, spec)
            if args.execute:
                new = {tp: after for tp, (_, after) in plan.items()}
                (await admin.alter_group_offsets(args.group, new)).raise_for_errors()
        rows = [(tp.topic, tp.partition, before, after) for tp, (before, after) in plan.items()]
        if args.json:
            print_json(
                [
                    {"topic": t, "partition": p, "current_offset": b, "new_offset": a}
                    for t, p, b, a in rows
                ]
            )
        else:
            print_table(("TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"), rows)
        if args.execute:
            info(f"Reset the offsets of group {args.group} on {len(rows)} partitions.")
        else:
            info("Dry run: nothing changed (add --execute to reset the offsets).")
        return 0

    return run(main)
