"""The compiled (Cython) codec implementation, gathered under the names of `contract.py`.

Importing this module raises ImportError when the extensions were not built.
"""

from __future__ import annotations

from krafka._codec._buffer import receive_buffer
from krafka._codec._builder import RecordsBuilder
from krafka._codec._murmur import murmur2, murmur2_partition
from krafka._codec._records import (
    consumer_records,
    decode_batches,
    decode_entry,
    encode_batch,
    iter_batch_records,
    iter_batches,
    scan_batches,
)
from krafka._codec._take import slot_fields
from krafka._codec._types import BatchHeader, Record, RecordBatch
from krafka._codec._varint import (
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_unsigned_varint,
    encode_varint,
    encode_varlong,
)

name = "compiled"

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
