"""The consumer's options as the engine gets them: the rebalance timeout a member announces is
`max_poll_interval` (Java's `max.poll.interval.ms` sets both) unless `rebalance_timeout` says
otherwise."""

from __future__ import annotations

import pytest

from krafka.config import keywords_from_config
from krafka.errors import ConfigError
from krafka.io.consumer.settings import ConsumerSettings


def rebalance_timeout(**options: object) -> float:
    group = ConsumerSettings(group_id="g", **options).engine_config().group  # type: ignore[arg-type]
    assert group is not None
    return group.rebalance_timeout_s


def test_the_rebalance_timeout_is_the_poll_interval_unless_set() -> None:
    assert rebalance_timeout() == 300.0
    assert rebalance_timeout(max_poll_interval=60.0) == 60.0
    assert rebalance_timeout(max_poll_interval=60.0, rebalance_timeout=20.0) == 20.0
    with pytest.raises(ConfigError):
        rebalance_timeout(rebalance_timeout=0)


def test_max_poll_interval_ms_sets_the_poll_interval_and_so_the_rebalance_timeout() -> None:
    keywords = keywords_from_config({"group.id": "g", "max.poll.interval.ms": 90000}, "consumer")
    assert keywords["max_poll_interval"] == 90.0
    options = {k: v for k, v in keywords.items() if k in ConsumerSettings.__dataclass_fields__}
    assert rebalance_timeout(**{k: v for k, v in options.items() if k != "group_id"}) == 90.0
