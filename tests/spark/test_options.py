"""Data source option parsing (no Spark needed)."""

from __future__ import annotations

import pytest

from krafka.spark.options import Format, Mode, ReadOptions


def test_defaults() -> None:
    o = ReadOptions.parse({})
    assert not o.read_committed and not o.include_control and o.mode is Mode.FAILFAST
    assert o.key_format is o.value_format is Format.BINARY
    assert o.max_partition_bytes == 128 * 1024 * 1024 and o.check_crc


def test_every_option_case_insensitively() -> None:
    o = ReadOptions.parse({
        "ISOLATION": "READ_COMMITTED", "includeControl": "True", "keyFormat": "string",
        "valueformat": "JSON", "mode": "permissive", "startingOffset": "5", "endingOffset": "9",
        "startingTimestamp": "2024-01-02T03:04:05", "endingTimestamp": "1704164645123",
        "maxPartitionBytes": "64m", "checkCrc": "false",
    })  # fmt: skip
    assert o.read_committed and o.include_control and not o.check_crc
    assert (o.key_format, o.value_format, o.mode) == (Format.STRING, Format.JSON, Mode.PERMISSIVE)
    assert (o.window.start_offset, o.window.end_offset) == (5, 9)
    assert o.window.start_timestamp == 1704164645000
    assert o.window.end_timestamp == 1704164645123
    assert o.max_partition_bytes == 64 << 20
    assert ReadOptions.parse({"startingTimestamp": "2024-01-02T04:04:05+01:00"}).window \
        .start_timestamp == 1704164645000  # fmt: skip


@pytest.mark.parametrize(
    "options",
    [{"isolation": "serializable"}, {"mode": "dropmalformed"}, {"keyFormat": "avro"},
     {"maxPartitionBytes": "0"}, {"includeControl": "yes"}],
)  # fmt: skip
def test_bad_values_are_rejected(options: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        ReadOptions.parse(options)
