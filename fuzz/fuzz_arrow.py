"""atheris harness: `decode_to_arrow` (compiled C-to-Arrow path and its pure twin).

Invariant: a table or CorruptRecordError, and both implementations give equal tables; the
number of rows equals what `decode_batches` yields for data records.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports():
    from krafka.arrow import decode_to_arrow
    from krafka.errors import CorruptRecordError

CAP = 4 << 20


def table_or_error(data: bytes, implementation: str) -> object:
    try:
        return decode_to_arrow(
            data, include_control=True, max_decompressed_size=CAP, implementation=implementation
        ).to_pylist()
    except CorruptRecordError:
        return CorruptRecordError


def test_one_input(data: bytes) -> None:
    compiled = table_or_error(data, "compiled")
    pure = table_or_error(data, "pure")
    if compiled != pure:
        raise AssertionError(f"decode_to_arrow implementations disagree on {data!r}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from seeds import write_corpus

    corpus = write_corpus(Path(__file__).resolve().parent / ".corpus" / "arrow")
    atheris.Setup([*sys.argv, str(corpus)], test_one_input)
    atheris.Fuzz()
