"""`krafka cluster describe`: the cluster id, the controller and every broker."""

from __future__ import annotations

import argparse
from typing import Any

from krafka.cli.common import add_command, add_json, admin_client, run
from krafka.cli.output import print_fields, print_json, print_table


def add_parser(subparsers: Any) -> None:
    group = subparsers.add_parser("cluster", help="the cluster's brokers and controller")
    commands = group.add_subparsers(dest="cluster_command", metavar="COMMAND", required=True)
    describe = add_command(commands, "describe", run_describe, "cluster id, controller, brokers")
    add_json(describe)


def run_describe(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with admin_client(args) as admin:
            cluster = await admin.describe_cluster()
        controller = None if cluster.controller is None else cluster.controller.node_id
        nodes = sorted(cluster.nodes, key=lambda n: n.node_id)
        if args.json:
            print_json(
                {
                    "cluster_id": cluster.cluster_id,
                    "controller": controller,
                    "brokers": [
                        {"id": n.node_id, "host": n.host, "port": n.port, "rack": n.rack}
                        for n in nodes
                    ],
                }
            )
            return 0
        print_fields([("Cluster", cluster.cluster_id), ("Controller", controller)])
        print_table(
            ("ID", "HOST", "PORT", "RACK", "ROLE"),
            [
                (n.node_id, n.host, n.port, n.rack, "controller" if n.node_id == controller else "")
                for n in nodes
            ],
        )
        return 0

    return run(main)
