"""Instructions per record under callgrind: a client's cost that the machine's load cannot skew.

Runs a bench child (`e2e.py` or `consume.py --child NAME ...`) under `valgrind --tool=callgrind`
twice, with N and 5N records, and prints (I(5N) - I(N)) / 4N: the marginal instructions per
record of every thread of the process (librdkafka's included), start-up and imports cancelled
out. The broker (`--cluster`) runs outside valgrind.

    python benches/instructions.py --cluster tansu [--records 20000]
        [--produce krafka-confirm,confluent-confirm] [--consume krafka,confluent-kafka]
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

HERE = Path(__file__).resolve().parent


def instructions(command: list[str]) -> int:
    """Instructions executed by `command` (every thread) under callgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", *command],
            check=True, capture_output=True, timeout=1800,
        )  # fmt: skip
        totals = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
        assert totals is not None
        return int(totals.group(1))


def per_record(make: Callable[[int], list[str]], n: int) -> float:
    small, large = instructions(make(n)), instructions(make(5 * n))
    return (large - small) / (4 * n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=CLUSTERS, default="tansu")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument(
        "--produce", default="krafka,confluent-kafka,krafka-confirm,confluent-confirm"
    )
    parser.add_argument("--consume", default="krafka,krafka-iter,krafka-arrow,confluent-kafka")
    args = parser.parse_args()
    with broker(args.cluster) as running:
        bootstrap = running.bootstrap
        print(f"{args.cluster}: instructions per record (marginal, {args.records:,} -> "
              f"{5 * args.records:,} records, 100 B, 1 partition)")  # fmt: skip
        for name in filter(None, args.produce.split(",")):
            create_topic(bootstrap, f"bench-{name}", 1)

            def produce(n: int, name: str = name) -> list[str]:
                return [sys.executable, str(HERE / "e2e.py"), "--child", name,
                        "--bootstrap", bootstrap, "--records", str(n)]  # fmt: skip

            print(f"  produce {name:20s} {per_record(produce, args.records):8,.0f}", flush=True)
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
