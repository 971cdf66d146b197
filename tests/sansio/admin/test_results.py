"""`Results`: every item's value or error, and the all-or-nothing view."""

from __future__ import annotations

import pytest

from krafka.errors import TopicAlreadyExistsError
from krafka.sansio.admin.results import Results


def test_results_map_items_to_values_or_errors_in_order() -> None:
    error = TopicAlreadyExistsError("create topic 'b' failed: TOPIC_ALREADY_EXISTS")
    results: Results[str, int | None] = Results({"a": 1, "b": error, "c": None})
    assert list(results) == ["a", "b", "c"] and len(results) == 3
    assert results["b"] is error
    assert results.succeeded == {"a": 1, "c": None}
    assert results.failed == {"b": error}
    with pytest.raises(TopicAlreadyExistsError):
        results.raise_for_errors()
    assert Results({"a": 1}).raise_for_errors() == {"a": 1}
    assert "TopicAlreadyExistsError" in repr(results)
    assert dict(Results()) == {}
