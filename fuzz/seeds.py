"""Seed inputs from the shared golden data (when present) for the fuzzers' corpora."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "testdata"


def seed_files() -> list[Path]:
    if not SHARED.is_dir():
        return []
    return sorted(p for p in SHARED.rglob("*") if p.suffix in (".bin", ".log", ".msgset"))


def write_corpus(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for p in seed_files():
        (directory / p.name).write_bytes(p.read_bytes()[:65536])
    return directory
