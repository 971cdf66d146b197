"""What a share consumer hands the application, and how one partition's ShareFetch data becomes
those records (Java's ShareCompletedFetch).

Only offsets the response says this member acquired are returned, each with the delivery count
of its acquisition. Acquired offsets the data holds no record for (control records, offsets
compacted away, batches starting before the acquired range) are settled as GAP at once; a batch
that fails its CRC or cannot be decoded is REJECTed whole (no one could ever read it); a record
the deserializers refuse is RELEASEd and its error reported once the records before it are out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from krafka._codec import impl
from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka.errors import CorruptRecordError, KrafkaError, RecordDeserializationError
from krafka.sansio.consumer.completed_fetch import deserialize
from krafka.sansio.consumer.record import Header
from krafka.sansio.share.acknowledgements import GAP, AcknowledgeType
from krafka.structs import TopicPartition

Deserializer = Callable[[Any], Any]
#: Acquired offsets one partition's answer may hold (a broker acquires at most about
#: max_poll_records, whole batches rounding it up); more is a broken or hostile answer.
MAX_ACQUIRED: Final = 1 << 17


class ShareRecord(NamedTuple):
    """One record delivered by a share group: a `ConsumerRecord`'s fields plus how many times
    it has been delivered (1 the first time; RELEASE and lock expiry add one)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: Any
    value: Any
    headers: tuple[Header, ...]
    leader_epoch: int | None
    delivery_count: int

    def is_tombstone(self) -> bool:
        return self.value is None


impl.slot_fields(ShareRecord)  # `record.value` read as a slot: see `krafka._codec.take`


@dataclass(slots=True)
class DecodedShareData:
    """One partition's share-fetched records, the settlements decided while decoding, and the
    errors to report."""

    records: list[ShareRecord] = field(default_factory=list)
    settled: dict[int, int] = field(default_factory=dict)
    errors: list[KrafkaError] = field(default_factory=list)


def decode_share_data(
    partition: TopicPartition,
    data: bytes | memoryview | None,
    acquired: Iterable[tuple[int, int, int]],
    *,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
    key_deserializer: Deserializer | None = None,
    value_deserializer: Deserializer | None = None,
) -> DecodedShareData:
    """`acquired` holds (first offset, last offset, delivery count) ranges."""
    counts: dict[int, int] = {}
    for first, last, count in acquired:
        if first < 0 or last < first or len(counts) + last - first >= MAX_ACQUIRED:
            continue  # a hostile or broken range: nothing of it can be settled safely
        for offset in range(first, last + 1):
            counts[offset] = count
    out = DecodedShareData()
    if counts and data:
        _decode(partition, data, counts, out, check_crc, max_decompressed_size,
                key_deserializer, value_deserializer)  # fmt: skip
    delivered = {record.offset for record in out.records}
    for offset in counts:
        if offset not in delivered and offset not in out.settled:
            out.settled[offset] = GAP
    return out


def _decode(
    partition: TopicPartition,
    data: bytes | memoryview,
    counts: dict[int, int],
    out: DecodedShareData,
    check_crc: bool,
    max_decompressed_size: int,
    key_deserializer: Deserializer | None,
    value_deserializer: Deserializer | None,
) -> None:
    topic, part = partition
    try:
        headers = list(impl.scan_batches(data))
    except CorruptRecordError as exc:
        out.errors.append(_corrupt(partition, exc))
        headers = []
    for header in headers:
        first = header.base_offset
        last = first + (header.last_offset_delta or 0)
        try:
            batch = impl.decode_entry(data, header, check_crc, max_decompressed_size)
        except CorruptRecordError as exc:
            for offset in range(first, last + 1):
                if offset in counts:
                    out.settled[offset] = AcknowledgeType.REJECT
            out.errors.append(_corrupt(partition, exc))
            continue
        if batch.is_control:
            continue
        tstype = int(batch.timestamp_type or 0)
        epoch = batch.partition_leader_epoch
        leader_epoch = epoch if epoch is not None and epoch >= 0 else None
        for rec in batch.records:
            count = counts.get(rec.offset)
            if count is None or rec.offset in out.settled:
                continue
            try:
                key, value = deserialize(partition, rec, key_deserializer, value_deserializer,
                                         "released for redelivery")  # fmt: skip
            except RecordDeserializationError as error:
                out.settled[rec.offset] = AcknowledgeType.RELEASE
                out.errors.append(error)
                continue
            out.records.append(
                ShareRecord(topic, part, rec.offset, rec.timestamp, tstype, key, value,
                            tuple(rec.headers), leader_epoch, count)
            )  # fmt: skip


def _corrupt(partition: TopicPartition, exc: CorruptRecordError) -> CorruptRecordError:
    topic, part = partition
    return CorruptRecordError(
        f"corrupt share-fetch data for {topic}-{part}: {exc} (the batch was rejected)",
        getattr(exc, "offset", None),
    )


__all__ = ["MAX_ACQUIRED", "DecodedShareData", "ShareRecord", "decode_share_data"]
