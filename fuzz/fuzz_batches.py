"""atheris harness: record batch decoding (v2 and legacy, any mix), both implementations."""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

with atheris.instrument_imports():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from harness import batches_outcome
    from seeds import write_corpus


def test_one_input(data: bytes) -> None:
    batches_outcome(data)


if __name__ == "__main__":
    corpus = write_corpus(Path(__file__).resolve().parent / ".corpus" / "batches")
    atheris.Setup([*sys.argv, str(corpus)], test_one_input)
    atheris.Fuzz()
