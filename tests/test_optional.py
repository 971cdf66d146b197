"""A missing optional dependency names the extra that installs it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from krafka.codec import decode_to_arrow
from krafka.errors import KrafkaError, MissingDependencyError


def test_decode_to_arrow_without_pyarrow_names_the_extra(
    testdata: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = (testdata / "corpus" / "kp-v2-none.fetch.bin").read_bytes()
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ModuleNotFoundError
    with pytest.raises(ModuleNotFoundError) as info:
        decode_to_arrow(raw, implementation="pure")
    assert isinstance(info.value, MissingDependencyError) and isinstance(info.value, KrafkaError)
    assert "pip install 'krafka[arrow]'" in str(info.value) and info.value.name == "pyarrow"
