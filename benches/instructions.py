"""Instructions per record under callgrind: a client's cost that the machine's load cannot skew.

Runs a bench child (`e2e.py` or `consume.py --child NAME ...`) under `valgrind --tool=callgrind`
twice, with N and 5N records, and prints (I(5N) - I(N)) / 4N: the marginal instructions per
record of every thread of the process (librdkafka's included), start-up and imports cancelled
out. The broker (`--cluster`) runs outside valgrind. Produce takes e2e.py's workload options
(`--partitions`, `--value-size`, `--compression`) and its `NAME@base` clients (krafka from the
`--baseline` source tree, for before/after counts of a change). Its producers linger 1 s
(`--linger-ms`): callgrind runs a client some 50 times slower, so e2e's 5 ms would seal a batch
every few dozen records, where a real run fills each to its size; how often a client looks at a
due linger then sets the count (the sync producer runs its timers from `send`, an async one
only when the application yields), not its cost per record.

    python benches/instructions.py --cluster tansu [--records 20000]
        [--produce krafka-confirm,confluent-confirm] [--consume krafka,confluent-kafka]
        [--partitions 12 --value-size 1000 --compression lz4] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cluster import CLUSTERS, broker, create_topic
from _otel import child_env

HERE = Path(__file__).resolve().parent


def instructions(command: list[str], env: dict[str, str] | None = None) -> int:
    """Instructions executed by `command` (every thread) under callgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", *command],
            check=True, capture_output=True, timeout=1800, env=env,
        )  # fmt: skip
        totals = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
        assert totals is not None
        return int(totals.group(1))


def per_record(
    make: Callable[[int], list[str]], n: int, env: dict[str, str] | None = None
) -> float:
    small, large = instructions(make(n), env), instructions(make(5 * n), env)
    return (large - small) / (4 * n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=CLUSTERS, default="tansu")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument(
        "--produce", default="krafka,confluent-kafka,krafka-confirm,confluent-confirm"
    )
    parser.add_argument("--consume", default="krafka,krafka-iter,krafka-arrow,confluent-kafka")
    parser.add_argument("--partitions", type=int, default=1, help="produce: topic partitions")
    parser.add_argument("--value-size", type=int, default=100, help="produce: value bytes")
    parser.add_argument("--compression", default="none", choices=("none", "lz4", "zstd"))
    parser.add_argument("--linger-ms", type=int, default=1000, help="produce: clients' linger")
    parser.add_argument("--baseline", help="a krafka source tree for the produce NAME@base")
    args = parser.parse_args()
    with broker(args.cluster) as running:
        bootstrap = running.bootstrap
        print(
            f"{args.cluster}: instructions per record (marginal, {args.records:,} -> "
            f"{5 * args.records:,} records; produce {args.value_size} B, {args.partitions} "
            f"partition(s), compression {args.compression}, linger {args.linger_ms} ms; "
            "consume 100 B, 1 partition)"
        )
        workload = ["--value-size", str(args.value_size), "--partitions", str(args.partitions),
                    "--compression", args.compression,
                    "--linger-ms", str(args.linger_ms)]  # fmt: skip
        for name in filter(None, args.produce.split(",")):
            create_topic(bootstrap, f"bench-{name.replace('@', '-')}", args.partitions)

            def produce(n: int, name: str = name) -> list[str]:
                return [sys.executable, str(HERE / "e2e.py"), "--child", name,
                        "--bootstrap", bootstrap, "--records", str(n), *workload]  # fmt: skip

            count = per_record(produce, args.records, child_env(name, args.baseline))
            print(f"  produce {name:20s} {count:8,.0f}", flush=True)
        if args.consume:
            sys.path.insert(0, str(HERE.parent))
            from consume import fill

            topic = "bench-instructions"
            create_topic(bootstrap, topic, 1)
            fill(bootstrap, topic, 1, 5 * args.records, "none")
            for name in args.consume.split(","):

                def consume(n: int, name: str = name) -> list[str]:
                    return [sys.executable, str(HERE / "consume.py"), "--child", name, bootstrap,
                            topic, "1", str(n), "100"]  # fmt: skip

                print(f"  consume {name:20s} {per_record(consume, args.records):8,.0f}", flush=True)


if __name__ == "__main__":
    main()
