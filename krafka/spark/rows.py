"""The output rows: Spark schema, its Arrow twin, and shaping decoded chunks to fit them.

Decoders produce the wide Arrow schema of `krafka._codec.arrow` (microsecond timestamps here);
`shape` selects and converts its columns into exactly the Arrow schema Spark expects for the
`StructType` of `spark_schema` (Spark checks the two are equal).
"""

from __future__ import annotations

import json
from typing import Any

from krafka._codec.arrow import arrow_schema
from krafka.spark.options import Format, Mode, ReadOptions

BASE_COLUMNS = (
    "topic", "partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers",
    "producer_id", "is_transactional",
)  # fmt: skip
CORRUPT = "_corrupt"


def columns(options: ReadOptions) -> list[str]:
    names = list(BASE_COLUMNS)
    if options.include_control:
        names.append("is_control")
    if options.mode is Mode.PERMISSIVE:
        names.append(CORRUPT)
    return names


def output_arrow_schema(options: ReadOptions) -> Any:
    """The Arrow schema of the rows (equal to Spark's conversion of `spark_schema`)."""
    import pyarrow as pa

    wide = arrow_schema("us")
    fields = []
    for name in columns(options):
        if name == CORRUPT:
            fields.append(pa.field(CORRUPT, pa.string()))
        elif name in ("key", "value") and _format(options, name) is not Format.BINARY:
            fields.append(pa.field(name, pa.string()))
        else:
            fields.append(wide.field(name))
    return pa.schema(fields)


def spark_schema(options: ReadOptions) -> Any:
    """The Spark `StructType` of the rows."""
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        BooleanType,
        DataType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    types: dict[str, DataType] = {
        "topic": StringType(),
        "partition": IntegerType(),
        "offset": LongType(),
        "timestamp": TimestampType(),
        "timestamp_type": StringType(),
        "key": BinaryType(),
        "value": BinaryType(),
        "headers": ArrayType(header),
        "producer_id": LongType(),
        "is_transactional": BooleanType(),
        "is_control": BooleanType(),
        CORRUPT: StringType(),
    }
    for name in ("key", "value"):
        if _format(options, name) is not Format.BINARY:
            types[name] = StringType()
    return StructType([StructField(n, types[n]) for n in columns(options)])


def _format(options: ReadOptions, name: str) -> Format:
    return options.key_format if name == "key" else options.value_format


def shape(wide: Any, options: ReadOptions, topic: Any = None, partition: Any = None) -> Any:
    """Select and convert a wide chunk into the output schema.

    `topic`/`partition`, when given, are arrays replacing the sink's constant columns.
    """
    import pyarrow as pa

    schema = output_arrow_schema(options)
    n = wide.num_rows
    arrays = []
    for f in schema:
        if f.name == CORRUPT:
            arrays.append(pa.nulls(n, pa.string()))
        elif f.name == "topic" and topic is not None:
            arrays.append(topic)
        elif f.name == "partition" and partition is not None:
            arrays.append(partition)
        elif f.name in ("key", "value"):
            arrays.append(convert(wide.column(f.name), _format(options, f.name)))
        else:
            arrays.append(wide.column(f.name))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def convert(column: Any, fmt: Format) -> Any:
    """Binary key/value bytes as the requested format (see `Format`)."""
    import pyarrow as pa

    if fmt is Format.BINARY:
        return column
    try:
        text = column.cast(pa.string())
    except pa.ArrowInvalid:
        text = pa.array(
            [None if v is None else v.decode("utf-8", "replace") for v in column.to_pylist()],
            pa.string(),
        )
    if fmt is Format.STRING:
        return text
    return pa.array([_json_or_none(v) for v in text.to_pylist()], pa.string())


def _json_or_none(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        json.loads(text)
    except ValueError:
        return None
    return text


def corrupt_rows(
    options: ReadOptions, topic: str | None, partition: int | None, messages: list[str]
) -> Any:
    """One row per corrupt region: topic, partition and `_corrupt` set, everything else null."""
    import pyarrow as pa

    schema = output_arrow_schema(options)
    n = len(messages)
    values: dict[str, Any] = {
        "topic": pa.array([topic] * n, pa.string()),
        "partition": pa.array([partition] * n, pa.int32()),
        CORRUPT: pa.array(messages, pa.string()),
    }
    arrays = [values.get(f.name, pa.nulls(n, f.type)) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
