"""`share_env`: a topic and a share group reading it from the earliest offset, on librdkafka's
mock cluster and on Apache Kafka in turn (`mock_share_env` for the mock alone: scenarios
that need its fault injection)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _share_env import ShareEnv, kafka_share_env, mock_share_env  # noqa: E402

MakeEnv = Callable[..., Awaitable[ShareEnv]]


@pytest.fixture(params=["mock", pytest.param("kafka", marks=pytest.mark.one_backend)])
def share_env(request: pytest.FixtureRequest, make_mock_cluster: Any) -> MakeEnv:
    """`await share_env(partitions, lock_ms=..., max_attempts=...)`; the Apache Kafka twin of
    each scenario runs under one anyio backend by default (`one_backend`)."""
    if request.param == "mock":
        return lambda partitions=6, **settings: mock_share_env(
            make_mock_cluster, partitions, **settings
        )
    kafka = request.getfixturevalue("kafka")
    return lambda partitions=6, **settings: kafka_share_env(kafka, partitions, **settings)


@pytest.fixture
def mock_env(make_mock_cluster: Any) -> MakeEnv:
    return lambda partitions=6, **settings: mock_share_env(
        make_mock_cluster, partitions, **settings
    )
