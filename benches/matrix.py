"""The whole consume and produce matrix in one command, summed up against the targets.

Every cell (partitions x value size x compression) is one `consume.py` or `e2e.py` run with
its own broker and alternating fresh processes; this prints each cell's figures as it ends
and, at the end, one table per kind: krafka's ratio to each peer (ratio of medians, and the
median of the per-round ratios in brackets) beside the target. Each run's whole output is kept
in `--logs`.

Records per cell: consume 2,000,000 of 100 B and 600,000 of 1 KB; produce 1,000,000 and
600,000 (times `--scale`). The default clients are the ones the targets name: for consume
`krafka` (`poll`), `krafka-arrow`, librdkafka and the warm Java client; for produce flush-only
and confirmed krafka, the bulk `send_many` (`krafka-many`, every delivery confirmed per chunk),
librdkafka both ways and the warm Java client (a callback per record).

    python benches/matrix.py --cluster kafka [--rounds 5] [--kinds consume,produce]
        [--partitions 1,12] [--value-sizes 100,1000] [--compressions none,lz4,zstd]
        [--scale 1.0] [--logs DIR] [--consume-clients ...] [--produce-clients ...]
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from _cluster import CLUSTERS
from _timing import Ratio, ratios, table

BENCHES = Path(__file__).resolve().parent
SCRIPTS = {"consume": "consume.py", "produce": "e2e.py"}
RECORDS = {("consume", 100): 2_000_000, ("produce", 100): 1_000_000}
RECORDS_1K = 600_000
CLIENTS = {
    "consume": "krafka,krafka-arrow,confluent-kafka,java-warm",
    "produce": "krafka,krafka-confirm,krafka-many,confluent-kafka,confluent-confirm,java-warm",
}
#: kind -> (ours, peer, target) columns; a target of None is shown without a verdict.
TARGETS: dict[str, list[tuple[str, str, float | None]]] = {
    "consume": [
        ("krafka", "confluent-kafka", 2.0),
        ("krafka", "java-warm", 1.5),
        ("krafka-arrow", "java-warm", None),
    ],
    "produce": [
        ("krafka", "confluent-kafka", 1.5),
        ("krafka-confirm", "confluent-confirm", 1.5),
        ("krafka", "java-warm", 1.2),
        ("krafka-confirm", "java-warm", 1.2),
        ("krafka-many", "java-warm", 1.2),
    ],
}


@dataclass(frozen=True, slots=True)
class Cell:
    kind: str
    partitions: int
    value_size: int
    compression: str

    @property
    def name(self) -> str:
        size = f"{self.value_size // 1000}KB" if self.value_size >= 1000 else f"{self.value_size}B"
        return f"{self.partitions}p {size} {self.compression}"

    def records(self, scale: float) -> int:
        full = RECORDS.get((self.kind, self.value_size), RECORDS_1K)
        return max(1, round(full * scale))


def run_cell(cell: Cell, args: argparse.Namespace, logs: Path) -> dict[tuple[str, str], Ratio]:
    clients = args.consume_clients if cell.kind == "consume" else args.produce_clients
    command = [
        sys.executable, str(BENCHES / SCRIPTS[cell.kind]), "--cluster", args.cluster,
        "--rounds", str(args.rounds), "--partitions", str(cell.partitions),
        "--value-size", str(cell.value_size), "--compression", cell.compression,
        "--records", str(cell.records(args.scale)), "--clients", clients,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    log = logs / f"{cell.kind}-{cell.name.replace(' ', '-')}.log"
    log.write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{cell.kind} {cell.name} failed (see {log}):\n{done.stderr[-2000:]}")
    tail = done.stdout[done.stdout.rfind("\n\n") :]
    print(f"\n# {cell.kind} {cell.name}{tail}", flush=True)
    return ratios(done.stdout)


def summary(kind: str, results: dict[Cell, dict[tuple[str, str], Ratio]]) -> str:
    columns = TARGETS[kind]
    header = ["cell"] + [
        f"{ours}/{peer}" + ("" if target is None else f" (>= {target}x)")
        for ours, peer, target in columns
    ]
    rows = [
        [cell.name] + [judged(found.get((ours, peer)), target) for ours, peer, target in columns]
        for cell, found in results.items()
        if cell.kind == kind
    ]
    return table(f"{kind}: ratio of medians (same-round median)", header, rows)


def judged(ratio: Ratio | None, target: float | None) -> str:
    if ratio is None:
        return "-"
    verdict = "" if target is None else (" ok" if ratio.medians >= target else " MISS")
    return f"{ratio.medians:.2f} ({ratio.same_round:.2f}){verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=CLUSTERS, default="tansu")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kinds", default="consume,produce")
    parser.add_argument("--partitions", default="1,12")
    parser.add_argument("--value-sizes", default="100,1000")
    parser.add_argument("--compressions", default="none,lz4,zstd")
    parser.add_argument("--scale", type=float, default=1.0, help="records per cell, scaled")
    parser.add_argument("--logs", type=Path, help="keep each run's output here")
    parser.add_argument("--consume-clients", default=CLIENTS["consume"])
    parser.add_argument("--produce-clients", default=CLIENTS["produce"])
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    for kind in kinds:
        if kind not in SCRIPTS:
            parser.error(f"--kinds: {kind!r} is not one of {', '.join(SCRIPTS)}")
    cells = [
        Cell(kind, int(partitions), int(size), compression)
        for partitions, size, compression, kind in itertools.product(
            args.partitions.split(","),
            args.value_sizes.split(","),
            args.compressions.split(","),
            kinds,
        )
    ]
    with tempfile.TemporaryDirectory(prefix="krafka-matrix-") as scratch:
        logs = args.logs or Path(scratch)
        logs.mkdir(parents=True, exist_ok=True)
        results = {cell: run_cell(cell, args, logs) for cell in cells}
    print(f"\n{args.cluster}: {len(cells)} cells, medians of {args.rounds} rounds each")
    for kind in kinds:
        print(summary(kind, results))


if __name__ == "__main__":
    main()
