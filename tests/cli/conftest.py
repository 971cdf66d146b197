"""Makes `_cli` (running `krafka` as a subprocess) and the admin tests' `_members`
(librdkafka producers and group members) importable."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _path in (_HERE, _HERE.parent / "io" / "admin"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
