"""Record codec benchmark: krafka (compiled and pure) beside aiokafka (compiled) and kafka-python.

    python benches/codec.py [--quick]

Prints records/s and ratios (krafka / other) for encode, decode, decode+CRC at N = 1, 100, 1000,
10000 records (16-byte keys, 100-byte values, one header with the same value in every record;
row "1000u": a unique header value per record), compressed decode per codec, CRC32C MB/s, and
murmur2 calls/s. Medians of samples taken in alternation; quote ratios, not absolute times.

Both sides do the same work, each at its best:
- encode starts from the same (key, value, headers, timestamp) data: krafka's timing includes
  building its `Record`s (`Record(0, t, k, v, h)`, as the producer does), the peers' their
  `append` calls (positional). `krafka-tuples` passes (key, value, headers, timestamp) tuples
  built in the timed loop instead of Records. The peers' builders return their buffer as is.
- every decode reads offset, timestamp, key, value and headers of every record, and decode+crc
  checks the CRC on both sides (aiokafka's and kafka-python's `validate_crc()`); the peers read
  the same `bytes` (no copy). Each side gets its own copy of that loop's code, so CPython's
  specialising interpreter sees one record type per loop, as in a real program.
- `krafka-iter` is the compiled codec's streaming path (`scan_batches` + `iter_batch_records`,
  records decoded while iterating, as aiokafka does); `krafka-compiled` is `decode_batches`.
- aiokafka runs its compiled codec (checked: `DefaultRecordBatch.__module__` names `_crecords`).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import types
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import crc32c as crc32c_pkg
from _timing import compare, rate, table
from aiokafka.partitioner import murmur2 as aio_murmur2
from aiokafka.record import _crecords
from kafka.partitioner.default import murmur2 as kp_murmur2
from kafka.record import default_records as kp_records

from krafka._codec import implementations
from krafka._codec.crc import crc32c as krafka_crc32c

CODES = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
IMPLS = implementations()
KRAFKA = IMPLS.get("compiled", IMPLS["pure"])
if "_crecords" not in _crecords.DefaultRecordBatch.__module__:
    raise SystemExit(f"aiokafka's compiled codec is not in use ({_crecords.DefaultRecordBatch})")


Data = list[tuple[bytes, bytes, list[tuple[str, bytes]], int]]


def make_records(n: int, unique_headers: bool = False) -> Data:
    """16-byte keys, 100-byte values, one header whose value is the same in every record unless
    `unique_headers` (then 8 random bytes each, like a per-message trace id)."""
    rnd = random.Random(n)
    return [
        (
            rnd.randbytes(16),
            rnd.randbytes(100),
            [("trace", rnd.randbytes(8) if unique_headers else b"abcdefgh")],
            1_700_000_000_000 + i,
        )
        for i in range(n)
    ]


def krafka_encode(codec: object, data: Data, comp: str = "none") -> Callable[[], bytes]:
    """Records built inside the timed call, as the peers' appends are."""
    record = codec.Record  # type: ignore[attr-defined]

    def run() -> bytes:
        records = [record(0, t, k, v, h) for k, v, h, t in data]
        return codec.encode_batch(records, comp, 0, -1, -1, -1, False)  # type: ignore[attr-defined, no-any-return]

    return run


def krafka_encode_tuples(codec: object, data: Data, comp: str = "none") -> Callable[[], bytes]:
    def run() -> bytes:
        records = [(k, v, h, t) for k, v, h, t in data]
        return codec.encode_batch(records, comp, 0, -1, -1, -1, False)  # type: ignore[attr-defined, no-any-return]

    return run


def builder_encode(module: object, data: Data, comp: str = "none") -> Callable[[], object]:
    def run() -> object:
        b = module.DefaultRecordBatchBuilder(2, CODES[comp], 0, -1, -1, -1, 1 << 30)  # type: ignore[attr-defined]
        for i, (k, v, h, t) in enumerate(data):
            b.append(i, t, k, v, h)
        return b.build()

    return run


def _touch(records: object) -> None:
    """Read every field of every record (separate loads: no tuple built per record)."""
    for r in records:  # type: ignore[attr-defined]
        r.offset  # noqa: B018
        r.timestamp  # noqa: B018
        r.key  # noqa: B018
        r.value  # noqa: B018
        r.headers  # noqa: B018


def touch_loop() -> Callable[[object], None]:
    """A private copy of `_touch` (own bytecode, so its specialisations are its own)."""
    return types.FunctionType(_touch.__code__.replace(), _touch.__globals__)


def krafka_decode(codec: object, blob: bytes, crc: bool) -> Callable[[], None]:
    touch = touch_loop()

    def run() -> None:
        for batch in codec.decode_batches(blob, crc):  # type: ignore[attr-defined]
            touch(batch.records)

    return run


def krafka_iterate(codec: object, blob: bytes, crc: bool) -> Callable[[], None]:
    """The streaming path: records decoded one at a time while iterating (like aiokafka's)."""
    touch = touch_loop()

    def run() -> None:
        for header in codec.scan_batches(blob):  # type: ignore[attr-defined]
            touch(codec.iter_batch_records(blob, header, crc))  # type: ignore[attr-defined]

    return run


def batch_decode(cls: type, blob: bytes, crc: bool) -> Callable[[], None]:
    touch = touch_loop()

    def run() -> None:
        batch = cls(blob)
        if crc and not batch.validate_crc():
            raise AssertionError("bad crc")
        touch(batch)

    return run


PEERS = {
    "aiokafka": (_crecords, _crecords.DefaultRecordBatch),
    "kafka-python": (kp_records, kp_records.DefaultRecordBatch),
}
#: krafka variants beside `krafka-compiled` whose own ratio to aiokafka is printed too
VARIANTS = ("krafka-tuples", "krafka-iter")


def contenders(op: str, n: int, unique_headers: bool = False) -> dict[str, Callable[[], object]]:
    data = make_records(n, unique_headers)
    blob = bytes(KRAFKA.encode_batch(data, "none", 0, -1, -1, -1, False))
    crc = op == "decode+crc"
    fns: dict[str, Callable[[], object]] = {}
    for name, codec in IMPLS.items():
        fns[f"krafka-{name}"] = (
            krafka_encode(codec, data) if op == "encode" else krafka_decode(codec, blob, crc)
        )
    if op == "encode":
        fns["krafka-tuples"] = krafka_encode_tuples(KRAFKA, data)
    else:
        fns["krafka-iter"] = krafka_iterate(KRAFKA, blob, crc)
    for name, (module, cls) in PEERS.items():
        fns[name] = builder_encode(module, data) if op == "encode" else batch_decode(cls, blob, crc)
    return fns


def bench_records(sizes: list[int]) -> None:
    for op in ("encode", "decode", "decode+crc"):
        rows = []
        for n in sizes:
            timings = compare(contenders(op, n))
            rows.append(row(n, timings))
        if op != "encode":
            # decoding shares equal headers between records: the same data with a different
            # header value in every record shows the figures without that
            timings = compare(contenders(op, 1000, unique_headers=True))
            rows.append(["1000u", *row(1000, timings)[1:]])
        print(table(f"{op} (records/s; ratio = krafka-compiled speed / peer speed)",
                    header(timings), rows))  # fmt: skip
        if op != "encode":
            print("1000u: the same 1000 records with a unique header value each")


def header(timings: dict[str, float]) -> list[str]:
    peers = [k for k in timings if not k.startswith("krafka")]
    extra = [f"{v.removeprefix('krafka-')} x aiokafka" for v in VARIANTS if v in timings]
    return ["N", *timings, *(f"x {p}" for p in peers), *extra]


def row(n: int, timings: dict[str, float]) -> list[str]:
    best = timings.get("krafka-compiled", timings["krafka-pure"])
    peers = [k for k in timings if not k.startswith("krafka")]
    extra = [f"{timings['aiokafka'] / timings[v]:.2f}" for v in VARIANTS if v in timings]
    return [str(n), *(rate(n, t) for t in timings.values()),
            *(f"{timings[p] / best:.2f}" for p in peers), *extra]  # fmt: skip


def bench_compressed(n: int) -> None:
    rows = []
    data = make_records(n)
    for comp in ("gzip", "snappy", "lz4", "zstd"):
        blob = bytes(KRAFKA.encode_batch(data, comp, 0, -1, -1, -1, False))
        fns: dict[str, Callable[[], object]] = {
            f"krafka-{k}": krafka_decode(c, blob, True) for k, c in IMPLS.items()
        }
        fns["krafka-iter"] = krafka_iterate(KRAFKA, blob, True)
        fns["aiokafka"] = batch_decode(_crecords.DefaultRecordBatch, blob, True)
        kp = batch_decode(kp_records.DefaultRecordBatch, blob, True)
        try:
            kp()
            fns["kafka-python"] = kp
        except Exception:  # a codec kafka-python lacks here (e.g. no snappy library)
            fns["kafka-python"] = lambda: None
        timings = compare(fns)
        cells = row(n, timings)[1:]
        if fns["kafka-python"] is not kp:
            cells = ["n/a" if h.endswith("kafka-python") else c
                     for h, c in zip(header(timings)[1:], cells, strict=True)]  # fmt: skip
        rows.append([comp, *cells])
    print(table(f"compressed decode+crc, N={n} (records/s)", ["codec", *header(timings)[1:]],
                rows))  # fmt: skip


def bench_crc_and_murmur() -> None:
    blob = os.urandom(1 << 20)
    crc = compare({
        "pkg": lambda: crc32c_pkg.crc32c(blob),
        "krafka": lambda: krafka_crc32c(blob),
        "aiokafka": lambda: _crecords.crc32c_cython(blob),
    })  # fmt: skip
    t_pkg, t_ours, t_aio = crc["pkg"], crc["krafka"], crc["aiokafka"]
    mb = len(blob) / 1e6
    print(table("CRC32C over 1 MiB (MB/s)", ["crc32c pkg", "krafka", "aiokafka", "krafka/pkg"],
                [[f"{mb / t_pkg:.0f}", f"{mb / t_ours:.0f}", f"{mb / t_aio:.0f}",
                  f"{t_pkg / t_ours:.2f}"]]))  # fmt: skip
    keys = [os.urandom(16) for _ in range(1000)]
    funcs = {f"krafka-{k}": c.murmur2 for k, c in IMPLS.items()}
    funcs["aiokafka"] = aio_murmur2
    funcs["kafka-python"] = kp_murmur2

    def hash_all(f: Callable[[bytes], int]) -> Callable[[], list[int]]:
        return lambda: [f(k) for k in keys]

    timings = compare({name: hash_all(f) for name, f in funcs.items()})
    print(table("murmur2 of 16-byte keys (calls/s)", header(timings), [row(1000, timings)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="N = 1, 1000 only")
    args = parser.parse_args()
    print(f"krafka implementations: {', '.join(IMPLS)}")
    bench_records([1, 1000] if args.quick else [1, 100, 1000, 10000])
    bench_compressed(1000)
    bench_crc_and_murmur()


if __name__ == "__main__":
    main()
