"""PEP 562 re-exports for a package `__init__`: each name is imported from its module on first
use, so importing one submodule of a package (which runs the package's `__init__`) does not
import every sibling the package re-exports."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    namespace: dict[str, Any], where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of the package whose `globals()` is `namespace`:
    `where` maps each exported name to the module defining it. A resolved name is stored in
    the namespace, so later lookups are plain attribute reads."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        try:
            module = where[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *where])

    return __getattr__, __dir__
