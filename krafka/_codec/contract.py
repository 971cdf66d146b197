"""The contract both codec implementations satisfy (compiled Cython and pure Python).

`krafka._codec.pure` and `krafka._codec.compiled` are namespaces that each provide every name
below; `krafka._codec.impl` is the one in use. Differential tests run both against each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TypeVar

from krafka._codec.types import BatchHeader as BatchHeaderT
from krafka._codec.types import RecordBatch as RecordBatchT
from krafka._codec.types import RecordLike, RecordTuple

_T = TypeVar("_T")

Buffer = bytes | bytearray | memoryview


class CodecImplementation(Protocol):
    """Everything the rest of krafka needs from a record codec."""

    name: str
    Record: type[Any]
    RecordBatch: type[Any]
    RecordsBuilder: type[Any]
    BatchHeader: type[Any]

    def decode_batches(
        self, buf: Buffer, check_crc: bool = ..., max_decompressed_size: int = ...
    ) -> list[RecordBatchT]: ...

    def iter_batches(
        self, buf: Buffer, check_crc: bool = ..., max_decompressed_size: int = ...
    ) -> Iterator[RecordBatchT]: ...

    def scan_batches(self, buf: Buffer) -> Iterator[BatchHeaderT]: ...

    def decode_entry(
        self,
        buf: Buffer,
        header: BatchHeaderT,
        check_crc: bool = ...,
        max_decompressed_size: int = ...,
    ) -> RecordBatchT: ...

    def iter_batch_records(
        self,
        buf: Buffer,
        header: BatchHeaderT,
        check_crc: bool = ...,
        max_decompressed_size: int = ...,
    ) -> Iterator[Any]: ...

    def encode_batch(
        self, records: Iterable[RecordLike | RecordTuple], **options: Any
    ) -> bytes: ...

    def murmur2(self, data: Buffer) -> int: ...

    def murmur2_partition(self, key: Buffer, num_partitions: int) -> int: ...

    def decode_varint(self, buf: Buffer, pos: int = ...) -> tuple[int, int]: ...

    def decode_varlong(self, buf: Buffer, pos: int = ...) -> tuple[int, int]: ...

    def decode_unsigned_varint(self, buf: Buffer, pos: int = ...) -> tuple[int, int]: ...

    def encode_varint(self, value: int) -> bytes: ...

    def encode_varlong(self, value: int) -> bytes: ...

    def encode_unsigned_varint(self, value: int) -> bytes: ...

    def consumer_records(
        self,
        buf: Buffer,
        header: BatchHeaderT,
        check_crc: bool,
        max_decompressed_size: int,
        topic: str,
        partition: int,
        record_type: type,
    ) -> list[Any]: ...

    def slot_fields(self, cls: type[_T]) -> type[_T]: ...

    def receive_buffer(self, size: int) -> bytearray: ...
