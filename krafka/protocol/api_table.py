"""A read-only mapping whose values are classes imported on first lookup.

`REQUESTS` and `RESPONSES` map every `ApiKey` to its message class; building them as plain
dicts would import all ~150 generated modules up front, while a client speaks a dozen APIs.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class ApiTable(Mapping[K, V], Generic[K, V]):
    """`key -> value`, where each value is `attribute` of module `package.module`, imported when
    first looked up and then kept."""

    __slots__ = ("_loaded", "_package", "_where")

    def __init__(self, package: str, where: Mapping[K, tuple[str, str]]) -> None:
        self._package = package
        self._where = dict(where)
        self._loaded: dict[K, V] = {}

    def __getitem__(self, key: K) -> V:
        try:
            return self._loaded[key]
        except KeyError:
            module, attribute = self._where[key]
        value: Any = getattr(importlib.import_module(f"{self._package}.{module}"), attribute)
        self._loaded[key] = value
        return value  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[K]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def __repr__(self) -> str:
        return f"ApiTable({self._package!r}, {len(self)} entries)"
