"""The blocking admin client against Tansu: results and exceptions of the async classes,
`run` for the async API, use from a running event loop, and threads sharing it."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

import pytest

from krafka import NewTopic, Results
from krafka.errors import InvalidStateError, TopicAlreadyExistsError
from krafka.io.admin import AdminClient as AsyncAdminClient
from krafka.sync import AdminClient

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]


def test_calls_results_and_errors(broker: Any) -> None:
    topic = f"sync-admin-{uuid.uuid4().hex[:8]}"
    with AdminClient.from_config({"bootstrap.servers": broker.bootstrap_servers}) as admin:
        created = admin.create_topics([NewTopic(topic, 3)])
        assert isinstance(created, Results) and created.failed == {}
        again = admin.create_topics([NewTopic(topic, 3)])
        assert isinstance(again[topic], TopicAlreadyExistsError)
        with pytest.raises(TopicAlreadyExistsError):
            again.raise_for_errors()
        assert topic in admin.list_topics()
        described = admin.describe_topics([topic]).raise_for_errors()[topic]
        assert len(described.partitions) == 3
        assert admin.run(lambda a: a.list_topics()) == admin.list_topics()
        assert isinstance(admin.async_client, AsyncAdminClient)

        names: list[list[str]] = []
        pool = [threading.Thread(target=lambda: names.append(admin.list_topics()))
                for _ in range(4)]  # fmt: skip
        for t in pool:
            t.start()
        for t in pool:
            t.join(30)
        assert len(names) == 4 and all(topic in n for n in names)
    assert admin.closed
    with pytest.raises(InvalidStateError):
        admin.list_topics()


def test_called_from_a_running_event_loop(broker: Any) -> None:
    async def cell() -> str | None:
        admin = AdminClient(bootstrap_servers=broker.bootstrap_servers)
        try:
            direct = admin.describe_cluster()
            threaded = await asyncio.to_thread(admin.describe_cluster)
            assert direct == threaded
            return direct.cluster_id
        finally:
            admin.close(timeout=5)

    assert asyncio.run(cell())
