"""The share consumer's Java properties."""

from __future__ import annotations

import pytest

from krafka.config import keywords_from_config
from krafka.errors import ConfigError


def test_share_properties_become_keywords() -> None:
    keywords = keywords_from_config(
        {"group.id": "workers", "share.acknowledgement.mode": "explicit",
         "fetch.max.wait.ms": "100", "max.poll.records": "50", "client.rack": "r1"},
        "share_consumer",
    )  # fmt: skip
    assert keywords == {
        "group_id": "workers", "acknowledgement_mode": "explicit", "fetch_max_wait": 0.1,
        "max_poll_records": 50, "client_rack": "r1",
    }  # fmt: skip


def test_unknown_or_bad_share_properties_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"share\.acknowledgement\.mode"):
        keywords_from_config({"share.acknowledgement.mode": "sometimes"}, "share_consumer")
    with pytest.raises(ConfigError, match=r"enable\.auto\.commit"):
        keywords_from_config({"enable.auto.commit": "true"}, "share_consumer")
