"""Record codec: compiled Cython modules with pure-Python twins.

`impl` is the implementation in use: the compiled one when it was built and
`KRAFKA_NO_EXTENSIONS` is not set, else the pure-Python one. `implementations()` lists every
implementation available here (differential tests run them against each other).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from krafka._codec import pure


def _import_compiled() -> ModuleType | None:
    try:
        return importlib.import_module("krafka._codec.compiled")
    except ImportError:
        return None


def _selected() -> ModuleType:
    if os.environ.get("KRAFKA_NO_EXTENSIONS", "") not in ("", "0"):
        return pure
    return _import_compiled() or pure


impl: ModuleType = _selected()


def implementations() -> dict[str, ModuleType]:
    """Every codec implementation importable here, by name (ignores KRAFKA_NO_EXTENSIONS)."""
    found = {"pure": pure}
    compiled = _import_compiled()
    if compiled is not None:
        found["compiled"] = compiled
    return found
