"""Makes `_group_apps` and the sans-IO tests' `_assignors` importable (import-mode=importlib)."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for path in (_HERE, _HERE.parents[1] / "sansio" / "group"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
