"""atheris harness: varint / varlong / unsigned varint decoding, both implementations agree."""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports():
    from krafka._codec import implementations
    from krafka.errors import CorruptRecordError

IMPLS = list(implementations().values())


def test_one_input(data: bytes) -> None:
    for name in ("decode_varint", "decode_varlong", "decode_unsigned_varint"):
        results = []
        for codec in IMPLS:
            try:
                results.append(getattr(codec, name)(data, 0))
            except CorruptRecordError:
                results.append("corrupt")
        if any(r != results[0] for r in results):
            raise AssertionError(f"{name} disagrees on {data!r}: {results}")


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
