"""PySpark registers krafka's `format("krafka-segments")` (archived `.log` segments) from
this module.

Spark 4 imports every top-level module named `pyspark_*` on its Python path and registers its
`DefaultSource` under the source's name, so `spark.read.format(...)` works
without `krafka.spark.register(spark)` wherever krafka is installed.
"""

from krafka.spark.source import SegmentSource as DefaultSource

__all__ = ["DefaultSource"]
