"""Spark's own Kafka connector (`org.apache.spark:spark-sql-kafka-0-10_2.13`) for the PySpark
installed here, resolved from Maven Central once into the krafka cache (no `--packages` download
when a session starts).

    from krafka.testing.spark_kafka import spark_kafka_jars
    spark = SparkSession.builder.config("spark.jars", ",".join(map(str, spark_kafka_jars()))) ...
    spark.read.format("kafka") ...          # the JVM source, beside format("krafka")

Only the jars PySpark does not ship already are returned (the connector's pom also names Scala,
Hadoop's client and compression libraries, in versions older than PySpark's own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from krafka.testing.runtime import maven_jars

_POM: Final = Path(__file__).with_name("spark-kafka.pom.xml")


def pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def spark_kafka_jars(version: str | None = None) -> list[Path]:
    """The connector's jars for Spark `version` (default: the installed PySpark's) that PySpark
    does not ship, for `spark.jars`."""
    import pyspark

    version = version or pyspark_version()
    directory = maven_jars(
        _POM, f"spark-sql-kafka-{version}", {"spark.version": version}, "spark-sql-kafka-*.jar"
    )
    shipped = {_artifact(p) for p in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    return sorted(p for p in directory.glob("*.jar") if _artifact(p) not in shipped)


def _artifact(jar: Path) -> str:
    """`kafka-clients-3.9.2.jar` -> `kafka-clients`."""
    return jar.stem.rsplit("-", 1)[0]


__all__ = ["pyspark_version", "spark_kafka_jars"]
