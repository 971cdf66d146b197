"""`Results`: what a many-item admin call returns, one entry per item asked about.

    results = await admin.create_topics([NewTopic("a", 3), NewTopic("b", 3)])
    results["a"]                 # the item's value, or the KrafkaError it failed with
    results.failed               # {"b": TopicAlreadyExistsError(...)}
    created = results.raise_for_errors()   # {"a": ..., "b": ...}, or raises the first error

One failed item never hides the others' success. A call raises by itself only when it could
not get an answer about any item (no broker reachable within the timeout, an API the cluster
lacks): then there are no per-item results to give.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from krafka.errors import KrafkaError

K = TypeVar("K")
V = TypeVar("V")


class Results(Mapping[K, "V | KrafkaError"], Generic[K, V]):
    """A read-only mapping of item -> value or the `KrafkaError` the item failed with, in the
    order the items were asked for."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[K, V | KrafkaError] | None = None) -> None:
        self._items: dict[K, V | KrafkaError] = dict(items or {})

    def __getitem__(self, key: K) -> V | KrafkaError:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Results({self._items!r})"

    @property
    def succeeded(self) -> dict[K, V]:
        """The items that succeeded, with their values."""
        return {k: v for k, v in self._items.items() if not isinstance(v, KrafkaError)}

    @property
    def failed(self) -> dict[K, KrafkaError]:
        """The items that failed, with their errors."""
        return {k: v for k, v in self._items.items() if isinstance(v, KrafkaError)}

    def raise_for_errors(self) -> dict[K, V]:
        """Every item's value; raises the first item's error (in the order asked) if any
        failed. For callers who want all-or-nothing, like `requests`' `raise_for_status()`."""
        for value in self._items.values():
            if isinstance(value, KrafkaError):
                raise value
        return self.succeeded


__all__ = ["Results"]
