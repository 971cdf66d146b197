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


@pytest.mark.parametrize("java", [True, False], ids=["with-java", "without-java"])
def test_krafka_spark_without_pyspark_names_the_extra_and_java_when_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, java: bool
) -> None:
    from krafka.spark import decode_batches_df, read_segments, register

    for name in [m for m in sys.modules if m == "pyspark" or m.startswith("pyspark.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    if java:
        (home / "bin" / "java").write_text("")
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("PATH", str(tmp_path))
    calls = [
        ("decode_batches_df", lambda: decode_batches_df(None, "raw")),
        ("read_segments", lambda: read_segments(None, "/data")),
        ("register", lambda: register(None)),
    ]
    for name, call in calls:
        with pytest.raises(MissingDependencyError) as info:
            call()
        message = str(info.value)
        assert f"krafka.spark.{name} needs pyspark" in message
        assert "pip install 'krafka[spark]'" in message
        assert ("Java 17+" in message) is not java
