"""`krafka topics list | describe | create | delete | alter-config`."""

from __future__ import annotations

import argparse
from typing import Any

from krafka.cli.common import add_command, add_json, admin_client, key_value, run
from krafka.cli.output import info, print_fields, print_json, print_table
from krafka.errors import KrafkaError
from krafka.sansio.admin.configs import AlterConfigOp, ConfigEntry, ConfigResource, ConfigSource
from krafka.sansio.admin.topics import NewTopic, TopicDescription


def add_parser(subparsers: Any) -> None:
    group = subparsers.add_parser("topics", help="list, describe, create, delete, configure topics")
    commands = group.add_subparsers(dest="topics_command", metavar="COMMAND", required=True)

    listing = add_command(commands, "list", run_list, "list topics with partitions and replicas")
    listing.add_argument("--internal", action="store_true", help="include internal topics")
    add_json(listing)

    describe = add_command(commands, "describe", run_describe, "partitions, leaders, ISR, configs")
    describe.add_argument("name", metavar="NAME")
    describe.add_argument(
        "--all-configs", action="store_true",
        help="every config with its value and source (default: only those set on the topic)",
    )  # fmt: skip
    add_json(describe)

    create = add_command(commands, "create", run_create, "create a topic")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--partitions", type=int, metavar="N", help="default: the broker's")
    create.add_argument("--replication-factor", type=int, metavar="R", help="default: broker's")
    create.add_argument(
        "--config", type=key_value, action="append", default=[], metavar="K=V",
        help="topic config (repeatable): --config retention.ms=60000",
    )  # fmt: skip
    create.add_argument("--if-not-exists", action="store_true", help="no error if it exists")

    delete = add_command(commands, "delete", run_delete, "delete a topic")
    delete.add_argument("name", metavar="NAME")

    alter = add_command(commands, "alter-config", run_alter, "set or delete topic configs")
    alter.add_argument("name", metavar="NAME")
    alter.add_argument(
        "--set", type=key_value, action="append", default=[], metavar="K=V", dest="set_configs",
        help="set a config (repeatable)",
    )  # fmt: skip
    alter.add_argument(
        "--delete", action="append", default=[], metavar="K", dest="delete_configs",
        help="back to the default (repeatable)",
    )  # fmt: skip


def replication_factor(topic: TopicDescription) -> int | None:
    return len(topic.partitions[0].replicas) if topic.partitions else None


def run_list(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with admin_client(args) as admin:
            names = await admin.list_topics(internal=args.internal)
            described = await admin.describe_topics(names) if names else {}
        rows: list[tuple[str, int | None, int | None]] = []
        for name in names:
            topic = described.get(name)
            if isinstance(topic, TopicDescription):
                rows.append((name, len(topic.partitions), replication_factor(topic)))
            else:  # deleted meanwhile
                rows.append((name, None, None))
        if args.json:
            print_json([{"topic": t, "partitions": p, "replication_factor": r} for t, p, r in rows])
        else:
            print_table(("TOPIC", "PARTITIONS", "REPLICATION-FACTOR"), rows)
        return 0

    return run(main)


def run_describe(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with admin_client(args) as admin:
            topic = (await admin.describe_topics([args.name])).raise_for_errors()[args.name]
            resource = ConfigResource.topic(args.name)
            configs = (await admin.describe_configs([resource])).get(resource)
        overrides = _configs(configs, args.all_configs)
        if args.json:
            print_json(_topic_json(topic, overrides))
            return 0
        print_fields(
            [
                ("Topic", topic.name),
                ("TopicId", topic.topic_id),
                ("PartitionCount", len(topic.partitions)),
                ("ReplicationFactor", replication_factor(topic)),
                ("Configs", ",".join(f"{k}={v}" for k, v in overrides.items()) or None),
            ]
        )
        print_table(
            ("PARTITION", "LEADER", "REPLICAS", "ISR", "OFFLINE"),
            [
                (p.partition, p.leader, _ids(p.replicas), _ids(p.isr), _ids(p.offline_replicas))
                for p in topic.partitions
            ],
        )
        return 0

    return run(main)


def _ids(ids: tuple[int, ...]) -> str | None:
    return ",".join(map(str, ids)) or None


def _configs(
    configs: dict[str, ConfigEntry] | KrafkaError | None, every: bool
) -> dict[str, str | None]:
    """The topic's own configs (set on it, not inherited), or `every` one; none when they
    could not be read. Sensitive values are never shown."""
    if not isinstance(configs, dict):
        return {}
    return {
        name: None if entry.is_sensitive else entry.value
        for name, entry in sorted(configs.items())
        if every or entry.source is ConfigSource.DYNAMIC_TOPIC_CONFIG
    }


def _topic_json(topic: TopicDescription, overrides: dict[str, str | None]) -> dict[str, Any]:
    return {
        "topic": topic.name,
        "topic_id": None if topic.topic_id is None else str(topic.topic_id),
        "internal": topic.internal,
        "configs": overrides,
        "partitions": [
            {
                "partition": p.partition,
                "leader": p.leader,
                "replicas": list(p.replicas),
                "isr": list(p.isr),
                "offline_replicas": list(p.offline_replicas),
            }
            for p in topic.partitions
        ],
    }


def run_create(args: argparse.Namespace) -> int:
    from krafka.errors import TopicAlreadyExistsError

    new = NewTopic(
        args.name,
        num_partitions=args.partitions,
        replication_factor=args.replication_factor,
        configs=dict(args.config),
    )

    async def main() -> int:
        async with admin_client(args) as admin:
            outcome = (await admin.create_topics([new]))[args.name]
        if isinstance(outcome, TopicAlreadyExistsError) and args.if_not_exists:
            info(f"Topic {args.name} already exists.")
            return 0
        if isinstance(outcome, KrafkaError):
            raise outcome
        info(f"Created topic {args.name}.")
        return 0

    return run(main)


def run_delete(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with admin_client(args) as admin:
            (await admin.delete_topics([args.name])).raise_for_errors()
        info(f"Deleted topic {args.name}.")
        return 0

    return run(main)


def run_alter(args: argparse.Namespace) -> int:
    ops = [AlterConfigOp.set(k, v) for k, v in args.set_configs]
    ops += [AlterConfigOp.delete(k) for k in args.delete_configs]
    if not ops:
        raise ValueError("nothing to change: give --set K=V and/or --delete K")

    async def main() -> int:
        resource = ConfigResource.topic(args.name)
        async with admin_client(args) as admin:
            (await admin.alter_configs({resource: ops})).raise_for_errors()
        info(f"Updated the configs of topic {args.name}.")
        return 0

    return run(main)
