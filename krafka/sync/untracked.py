"""Making objects the garbage collector does not track until they may hold a cycle.

`new_untracked(cls)` is `object.__new__(cls)` without tracking; `track(obj)` puts it back in
the collector's view (call it before giving it anything that could refer back to it). The
compiled twin (`_untracked.pyx`) does this for real; here, in pure Python, which cannot, both
are plain: objects are tracked as usual (`KRAFKA_NO_EXTENSIONS=1`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from krafka import _twins

T = TypeVar("T")


def pure_new_untracked(cls: type[T]) -> T:
    return object.__new__(cls)


def pure_track(obj: object) -> None:
    return None


def implementations() -> dict[str, Any]:
    """Every implementation importable here, by name: (new_untracked, track) pairs."""
    return _twins.implementations(
        (pure_new_untracked, pure_track), "krafka.sync._untracked", "new_untracked", "track"
    )


if TYPE_CHECKING:
    new_untracked, track = pure_new_untracked, pure_track
else:
    new_untracked, track = _twins.selected(implementations())

__all__ = ["implementations", "new_untracked", "track"]
