"""Record codec: compiled Cython modules with pure-Python twins.

`impl` is the implementation in use: the compiled one when it was built and
`KRAFKA_NO_EXTENSIONS` is not set, else the pure-Python one. `implementations()` lists every
implementation available here (differential tests run them against each other).
"""

from __future__ import annotations

import os
from types import ModuleType

from krafka._codec import pure


def _load_compiled() -> ModuleType | None:
    if os.environ.get("KRAFKA_NO_EXTENSIONS", "") not in ("", "0"):
        return None
    try:
        from krafka._codec import compiled
    except ImportError:
        return None
    return compiled


compiled: ModuleType | None = _load_compiled()
impl: ModuleType = compiled if compiled is not None else pure


def implementations() -> dict[str, ModuleType]:
    """Every codec implementation importable here, by name (ignores KRAFKA_NO_EXTENSIONS)."""
    found = {"pure": pure}
    try:
        from krafka._codec import compiled as c

        found["compiled"] = c
    except ImportError:
        pass
    return found
