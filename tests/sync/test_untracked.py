"""Untracked object creation: the compiled helpers and the pure (tracking) fallback make the
same objects; `track` is idempotent."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from krafka.sync.untracked import implementations

IMPLEMENTATIONS = implementations()


class Holder:
    __slots__ = ("__dict__", "__weakref__", "value")


@pytest.mark.parametrize("name", sorted(IMPLEMENTATIONS))
def test_new_untracked_then_tracked(name: str) -> None:
    new_untracked, track = IMPLEMENTATIONS[name]
    obj: Any = new_untracked(Holder)
    assert type(obj) is Holder and not hasattr(obj, "value")
    assert gc.is_tracked(obj) == (name == "pure")
    track(obj)
    track(obj)
    assert gc.is_tracked(obj)
    obj.cycle = obj  # tracked again, its cycle is collected
    gone = weakref.ref(obj)
    del obj
    gc.collect()
    assert gone() is None
    track(42)  # not a container: nothing to do
