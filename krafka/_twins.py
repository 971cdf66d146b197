"""Choosing between a compiled module and its pure-Python twin.

Every compiled piece of krafka has a pure twin with the same API: the readable reference and
the fallback. `implementations` lists what is importable (differential tests run them side by
side); `selected` picks the compiled one unless it is missing or `KRAFKA_NO_EXTENSIONS=1`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from typing import Any


def extensions_enabled() -> bool:
    """False when `KRAFKA_NO_EXTENSIONS` asks for the pure-Python twins."""
    return os.environ.get("KRAFKA_NO_EXTENSIONS", "") in ("", "0")


def implementations(pure: Any, module: str, *names: str) -> dict[str, Any]:
    """{"pure": pure, "compiled": module's `names` (one, or a tuple of several)} - the latter
    only when `module` imports (ignores KRAFKA_NO_EXTENSIONS)."""
    found: dict[str, Any] = {"pure": pure}
    with contextlib.suppress(ImportError):
        compiled = importlib.import_module(module)
        values = tuple(getattr(compiled, name) for name in names)
        found["compiled"] = values[0] if len(values) == 1 else values
    return found


def selected(found: dict[str, Any]) -> Any:
    """The compiled implementation if there is one and extensions are enabled, else the pure."""
    if extensions_enabled():
        return found.get("compiled", found["pure"])
    return found["pure"]


__all__ = ["extensions_enabled", "implementations", "selected"]
