"""Making objects the garbage collector does not track until they may hold a cycle.

`new_untracked(cls)` is `object.__new__(cls)` without tracking; `track(obj)` puts it back in
the collector's view (call it before giving it anything that could refer back to it). The
compiled twin (`_untracked.pyx`) does this for real; here, in pure Python, which cannot, both
are plain: objects are tracked as usual (`KRAFKA_NO_EXTENSIONS=1`).
"""

from __future__ import annotations

import contextlib
import importlib
import os
from typing import TYPE_CHECKING, Any, TypeVar

T = TypeVar("T")


def pure_new_untracked(cls: type[T]) -> T:
    return object.__new__(cls)


def pure_track(obj: object) -> None:
    return None


def implementations() -> dict[str, Any]:
    """Every implementation importable here, by name, as a module-like namespace."""
    found: dict[str, Any] = {"pure": (pure_new_untracked, pure_track)}
    with contextlib.suppress(ImportError):
        compiled = importlib.import_module("krafka.sync._untracked")
        found["compiled"] = (compiled.new_untracked, compiled.track)
    return found


def _selected() -> tuple[Any, Any]:
    found = implementations()
    if os.environ.get("KRAFKA_NO_EXTENSIONS", "") not in ("", "0"):
        return found["pure"]  # type: ignore[no-any-return]
    return found.get("compiled", found["pure"])  # type: ignore[no-any-return]


if TYPE_CHECKING:
    new_untracked, track = pure_new_untracked, pure_track
else:
    new_untracked, track = _selected()

__all__ = ["implementations", "new_untracked", "track"]
