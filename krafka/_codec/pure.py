"""The pure-Python codec implementation, gathered under the names of `contract.py`."""

from __future__ import annotations

from krafka._codec.batches import (
    decode_batches,
    decode_entry,
    iter_batch_records,
    iter_batches,
    scan_batches,
)
from krafka._codec.buffer import receive_buffer
from krafka._codec.murmur import murmur2, murmur2_partition
from krafka._codec.records import RecordsBuilder, encode_batch
from krafka._codec.take import consumer_records, slot_fields
from krafka._codec.types import BatchHeader, Record, RecordBatch
from krafka._codec.varint import (
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_unsigned_varint,
    encode_varint,
    encode_varlong,
)

name = "pure"

__all__ = [
    "BatchHeader",
    "Record",
    "RecordBatch",
    "RecordsBuilder",
    "consumer_records",
    "decode_batches",
    "decode_entry",
    "decode_unsigned_varint",
    "decode_varint",
    "decode_varlong",
    "encode_batch",
    "encode_unsigned_varint",
    "encode_varint",
    "encode_varlong",
    "iter_batch_records",
    "iter_batches",
    "murmur2",
    "murmur2_partition",
    "name",
    "receive_buffer",
    "scan_batches",
    "slot_fields",
]
