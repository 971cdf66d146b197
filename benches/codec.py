"""Record codec benchmark: krafka (compiled and pure) beside aiokafka (compiled) and kafka-python.

    python benches/codec.py [--quick]

Prints records/s and ratios (krafka / other) for encode, decode, decode+CRC at N = 1, 100, 1000,
10000 records (16-byte keys, 100-byte values, one header), compressed decode per codec, CRC32C
MB/s, and murmur2 calls/s. Every decode touches offset, timestamp, key, value and headers of
every record. `krafka-iter` is the compiled codec's streaming path (`scan_batches` +
`iter_batch_records`, records decoded while iterating, as aiokafka does). Medians of repeated
samples; quote ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import crc32c as crc32c_pkg
from _timing import median_seconds, rate, table
from aiokafka.partitioner import murmur2 as aio_murmur2
from aiokafka.record import _crecords
from kafka.partitioner.default import murmur2 as kp_murmur2
from kafka.record import default_records as kp_records

from krafka._codec import implementations
from krafka._codec.crc import crc32c as krafka_crc32c

CODES = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
IMPLS = implementations()
KRAFKA = IMPLS.get("compiled", IMPLS["pure"])


def make_records(n: int) -> list[tuple[bytes, bytes, list[tuple[str, bytes]], int]]:
    rnd = random.Random(n)
    return [
        (rnd.randbytes(16), rnd.randbytes(100), [("trace", b"abcdefgh")], 1_700_000_000_000 + i)
        for i in range(n)
    ]


def krafka_encode(codec: object, data: list, comp: str = "none") -> Callable[[], bytes]:
    records = [codec.Record(key=k, value=v, headers=h, timestamp=t) for k, v, h, t in data]  # type: ignore[attr-defined]
    return lambda: codec.encode_batch(records, comp, 0, -1, -1, -1, False)  # type: ignore[attr-defined]


def builder_encode(module: object, data: list, comp: str = "none") -> Callable[[], bytes]:
    def run() -> bytes:
        b = module.DefaultRecordBatchBuilder(2, CODES[comp], 0, -1, -1, -1, 1 << 30)  # type: ignore[attr-defined]
        for i, (k, v, h, t) in enumerate(data):
            b.append(i, timestamp=t, key=k, value=v, headers=h)
        return bytes(b.build())

    return run


def touch(records: object) -> None:
    """Read every field of every record (separate loads: no tuple built per record)."""
    for r in records:  # type: ignore[attr-defined]
        r.offset  # noqa: B018
        r.timestamp  # noqa: B018
        r.key  # noqa: B018
        r.value  # noqa: B018
        r.headers  # noqa: B018


def krafka_decode(codec: object, blob: bytes, crc: bool) -> Callable[[], None]:
    def run() -> None:
        for batch in codec.decode_batches(blob, crc):  # type: ignore[attr-defined]
            touch(batch.records)

    return run


def krafka_iterate(codec: object, blob: bytes, crc: bool) -> Callable[[], None]:
    """The streaming path: records decoded one at a time while iterating (like aiokafka's)."""

    def run() -> None:
        for header in codec.scan_batches(blob):  # type: ignore[attr-defined]
            touch(codec.iter_batch_records(blob, header, crc))  # type: ignore[attr-defined]

    return run


def batch_decode(cls: type, blob: bytes, crc: bool) -> Callable[[], None]:
    def run() -> None:
        batch = cls(bytearray(blob))
        if crc and not batch.validate_crc():
            raise AssertionError("bad crc")
        touch(batch)

    return run


def peers_available() -> dict[str, tuple[Callable, type]]:
    peers = {"aiokafka": (_crecords, _crecords.DefaultRecordBatch)}
    peers["kafka-python"] = (kp_records, kp_records.DefaultRecordBatch)
    return peers


def bench_records(sizes: list[int]) -> None:
    peers = peers_available()
    for op in ("encode", "decode", "decode+crc"):
        rows = []
        for n in sizes:
            data = make_records(n)
            blob = bytes(KRAFKA.encode_batch(
                [KRAFKA.Record(key=k, value=v, headers=h, timestamp=t) for k, v, h, t in data],
                "none", 0, -1, -1, -1, False))  # fmt: skip
            timings: dict[str, float] = {}
            for name, codec in IMPLS.items():
                fn = (
                    krafka_encode(codec, data)
                    if op == "encode"
                    else krafka_decode(codec, blob, op == "decode+crc")
                )
                timings[f"krafka-{name}"] = median_seconds(fn)
            if op != "encode":
                timings["krafka-iter"] = median_seconds(
                    krafka_iterate(KRAFKA, blob, op == "decode+crc")
                )
            for name, (module, cls) in peers.items():
                fn = (
                    builder_encode(module, data)
                    if op == "encode"
                    else batch_decode(cls, blob, op == "decode+crc")
                )
                timings[name] = median_seconds(fn)
            rows.append(row(n, timings))
        print(table(f"{op} (records/s; ratio = krafka-compiled speed / peer speed)",
                    header(timings), rows))  # fmt: skip


def header(timings: dict[str, float]) -> list[str]:
    peers = [k for k in timings if not k.startswith("krafka")]
    return ["N", *timings, *(f"x {p}" for p in peers)]


def row(n: int, timings: dict[str, float]) -> list[str]:
    best = timings.get("krafka-compiled", timings["krafka-pure"])
    peers = [k for k in timings if not k.startswith("krafka")]
    return [str(n), *(rate(n, t) for t in timings.values()),
            *(f"{timings[p] / best:.2f}" for p in peers)]  # fmt: skip


def bench_compressed(n: int) -> None:
    rows = []
    data = make_records(n)
    for comp in ("gzip", "snappy", "lz4", "zstd"):
        blob = bytes(krafka_encode(KRAFKA, data, comp)())
        timings = {f"krafka-{k}": median_seconds(krafka_decode(c, blob, True))
                   for k, c in IMPLS.items()}  # fmt: skip
        timings["aiokafka"] = median_seconds(batch_decode(_crecords.DefaultRecordBatch, blob, True))
        timings["kafka-python"] = median_seconds(
            batch_decode(kp_records.DefaultRecordBatch, blob, True)
        )
        rows.append([comp, *row(n, timings)[1:]])
    print(table(f"compressed decode+crc, N={n} (records/s)", ["codec", *header(timings)[1:]],
                rows))  # fmt: skip


def bench_crc_and_murmur() -> None:
    blob = os.urandom(1 << 20)
    t_pkg = median_seconds(lambda: crc32c_pkg.crc32c(blob))
    t_ours = median_seconds(lambda: krafka_crc32c(blob))
    t_aio = median_seconds(lambda: _crecords.crc32c_cython(blob))
    mb = len(blob) / 1e6
    print(table("CRC32C over 1 MiB (MB/s)", ["crc32c pkg", "krafka", "aiokafka", "krafka/pkg"],
                [[f"{mb / t_pkg:.0f}", f"{mb / t_ours:.0f}", f"{mb / t_aio:.0f}",
                  f"{t_pkg / t_ours:.2f}"]]))  # fmt: skip
    keys = [os.urandom(16) for _ in range(1000)]
    funcs = {f"krafka-{k}": c.murmur2 for k, c in IMPLS.items()}
    funcs["aiokafka"] = aio_murmur2
    funcs["kafka-python"] = kp_murmur2
    timings = {}
    for name, f in funcs.items():
        timings[name] = median_seconds(lambda f=f: [f(k) for k in keys])
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
