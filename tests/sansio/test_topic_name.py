"""Kafka's topic name rules, as Java's `Topic.validate` checks them."""

from __future__ import annotations

import pytest

from krafka.errors import InvalidTopicError
from krafka.sansio.metadata import ClusterMetadata
from krafka.sansio.topic_name import MAX_LENGTH, check_topic


@pytest.mark.parametrize("name", ["orders", "a.b_c-D9", "_internal", "x" * MAX_LENGTH, "..."])
def test_legal_names_pass(name: str) -> None:
    assert check_topic(name) == name


@pytest.mark.parametrize(
    ("name", "error"),
    [
        (None, TypeError),
        (b"orders", TypeError),
        (3, TypeError),
        ("", InvalidTopicError),
        (".", InvalidTopicError),
        ("..", InvalidTopicError),
        ("x" * (MAX_LENGTH + 1), InvalidTopicError),
        ("a b", InvalidTopicError),
        ("a/b", InvalidTopicError),
        ("café", InvalidTopicError),
    ],
)
def test_illegal_names_are_refused_and_never_tracked(name: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="topic"):
        check_topic(name)
    meta = ClusterMetadata([("localhost", 9092)])
    meta.add_topics(["ok"], 0.0)
    with pytest.raises(error):
        meta.add_topics(["fine", name], 0.0)  # type: ignore[list-item]
    assert meta.topics_to_refresh(0.0) == ["ok"]
