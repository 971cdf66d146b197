"""Session-wide fixtures: one local Tansu broker per test session, started lazily."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
if "KRAFKA_SHARED" in os.environ:
    SHARED = Path(os.environ["KRAFKA_SHARED"])
TESTDATA = SHARED / "testdata"


@pytest.fixture(scope="session")
def testdata() -> Path:
    if not TESTDATA.is_dir():
        pytest.skip(f"shared test data not found at {TESTDATA} (sdist build?)")
    return TESTDATA


@pytest.fixture(scope="session")
def broker() -> Iterator[object]:
    """A running Tansu broker on a free loopback port, for the whole session."""
    from krafka.testing import LocalBroker

    with LocalBroker() as b:
        yield b


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every anyio test runs under both backends."""
    return str(request.param)
