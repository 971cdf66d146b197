"""PySpark registers krafka's `format("krafka-share")` (a topic read through a KIP-932
share group) from this module.

Spark 4 imports every top-level module named `pyspark_*` on its Python path and registers its
`DefaultSource` under the source's name, so `spark.read.format(...)` works
without `krafka.spark.register(spark)` wherever krafka is installed.
"""

from krafka.spark.share_source import ShareSource as DefaultSource

__all__ = ["DefaultSource"]
