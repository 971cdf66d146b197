"""The executor's pools of clients: reuse by settings, close on failure, idle expiry and
capacity (plain objects stand in for clients: the pool only closes them)."""

from __future__ import annotations

import pytest

from krafka.spark.client_pool import ClientPool


class Fake:
    made = 0

    def __init__(self) -> None:
        Fake.made += 1
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_a_client_is_reused_for_the_same_settings_only() -> None:
    pool = ClientPool()
    with pool.lease({"bootstrap.servers": "a"}, Fake) as first:
        pass
    with pool.lease({"bootstrap.servers": "a"}, Fake) as again:
        assert again is first
        with pool.lease({"bootstrap.servers": "a"}, Fake) as concurrent:
            assert concurrent is not first  # leased: not shared
    with pool.lease({"bootstrap.servers": "b"}, Fake) as other:
        assert other is not first and other is not concurrent
    assert len(pool) == 3
    pool.close()
    assert first.closed and concurrent.closed and other.closed and len(pool) == 0


def test_a_failed_task_closes_its_client() -> None:
    pool = ClientPool()
    with pytest.raises(RuntimeError), pool.lease({}, Fake) as consumer:
        raise RuntimeError("task failed")
    assert consumer.closed and len(pool) == 0


def test_idle_clients_expire_and_the_pool_is_bounded() -> None:
    now = [0.0]
    pool = ClientPool(capacity=2, idle_timeout=10, clock=lambda: now[0])
    leases = [pool.lease({"k": str(i)}, Fake) for i in range(3)]
    consumers = [lease.__enter__() for lease in leases]
    for lease in leases:
        lease.__exit__(None, None, None)
    assert len(pool) == 2 and consumers[2].closed  # over capacity: closed, not kept
    now[0] = 11.0
    with pool.lease({"k": "x"}, Fake):
        assert consumers[0].closed and consumers[1].closed  # idle too long
    assert len(pool) == 1
