"""Spark layer tests (local[2]; skipped without Java or pyspark)."""
