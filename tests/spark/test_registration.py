"""`spark.read.format("krafka")` and its siblings work in a new Spark session without
`krafka.spark.register(spark)`: PySpark registers them from krafka's `pyspark_*` modules
(its static data source lookup). By default PySpark's lookup itself runs here, without a JVM;
the slow run also starts a fresh session (in a subprocess) and reads through them."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.timeout(240)]

NAMES = {"krafka", "krafka-segments", "krafka-share"}

ROOT = Path(__file__).resolve().parents[2]
SEGMENT = "anchor_test-0.log"

SCRIPT = """
import sys
from pyspark.sql import SparkSession

spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "1").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
rows = spark.read.format("krafka-segments").load(sys.argv[1]).select("offset").collect()
print("segments", len(rows))
live = spark.read.format("krafka").option("kafka.bootstrap.servers", "127.0.0.1:1")
print("krafka", ",".join(live.option("subscribe", "t").load().columns))
share = spark.readStream.format("krafka-share").option("kafka.bootstrap.servers", "127.0.0.1:1")
share = share.option("subscribe", "t").option("group.id", "g")
print("krafka-share", ",".join(share.load().columns))
spark.stop()
"""


def test_pysparks_lookup_finds_the_three_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a Spark worker runs to find Python data sources, on krafka's path."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("pyspark")
    from pyspark.sql.worker import lookup_data_sources
    from pyspark.worker_util import pickleSer

    monkeypatch.syspath_prepend(str(ROOT))
    out = io.BytesIO()
    lookup_data_sources._main(io.BytesIO(), out)
    out.seek(0)
    count = int.from_bytes(out.read(4), "big")
    found = {}
    for _ in range(count):
        name = out.read(int.from_bytes(out.read(4), "big")).decode()
        found[name] = pickleSer._read_with_length(out)
    assert set(found) >= NAMES
    assert {found[name].name() for name in NAMES} == NAMES


@pytest.mark.slow
def test_the_data_sources_need_no_register_call(testdata: Path) -> None:
    pytest.importorskip("pyarrow")
    pytest.importorskip("pyspark")
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("Java is not installed")
    path = os.environ.get("PYTHONPATH", "")
    env = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), path) if p),
    }
    segment = testdata / "real-segments" / SEGMENT
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(segment)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert int(lines["segments"]) > 0
    assert lines["krafka"].startswith("key,value,topic,partition,offset,timestamp")
    assert lines["krafka-share"].startswith("key,value,topic,partition,offset")
