"""Replay one fault run from its seed, on a cluster of its own:

    python tests/faults/run.py --fault kill-leader --seed 1234 --seconds 60 --backend trio

Prints the schedule, what the fault did, the checker's report; exits 1 on any violation.
`--fault all` runs every fault in turn on one cluster; `--network proxy` forces the proxy
fallback where network namespaces would work.
"""

from __future__ import annotations

import argparse
import pickle
import random
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from faultkit.nemesis import FaultKind, NetworkMode
from faultkit.scenario import RunResult, Shape, fault_cluster, run_scenario


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fault", default="all", choices=["all", *(k.value for k in FaultKind)])
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=20.0, help="load time per fault")
    parser.add_argument("--backend", default="asyncio", choices=["asyncio", "trio"])
    parser.add_argument("--rate", type=float, default=500.0, help="records/s per writer")
    parser.add_argument("--pause", type=float, default=10.0, help="SIGSTOP length, seconds")
    parser.add_argument("--network", choices=[m.value for m in NetworkMode], default=None)
    parser.add_argument("--records", type=int, default=0, help="write at least this many")
    parser.add_argument("--delivery-timeout", type=float, default=60.0)
    parser.add_argument("--keep", type=Path, default=None, help="keep the cluster's data here")
    parser.add_argument("--dump", type=Path, default=None, help="pickle each run's history here")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 20)
    kinds = (
        [k for k in FaultKind if k is not FaultKind.NONE]
        if args.fault == "all"
        else [FaultKind(args.fault)]
    )
    shape = Shape(
        seconds=args.seconds,
        rate=args.rate,
        pause=args.pause,
        records=args.records,
        delivery_timeout=args.delivery_timeout,
    )
    print(f"seed {seed}", flush=True)
    mode = NetworkMode(args.network) if args.network else None
    failed = False
    with fault_cluster(args.keep, mode=mode) as (cluster, network, proxies):
        for kind in kinds:

            async def one(kind: FaultKind = kind) -> RunResult:
                return await run_scenario(
                    cluster, network, proxies, kind, seed, args.backend, shape, echo=True
                )

            result = anyio.run(one, backend=args.backend)
            print(result.format(), "\n", flush=True)
            if args.dump is not None:
                args.dump.mkdir(parents=True, exist_ok=True)
                with open(args.dump / f"{kind.value}-{seed}.pickle", "wb") as out:
                    pickle.dump(result.history, out)
            failed = failed or not result.report.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
