"""Codec tests run against every implementation built here (compiled and pure Python)."""

from __future__ import annotations

from types import ModuleType

import pytest

from krafka._codec import implementations

IMPLS = implementations()


@pytest.fixture(params=sorted(IMPLS), scope="session")
def codec(request: pytest.FixtureRequest) -> ModuleType:
    return IMPLS[request.param]
