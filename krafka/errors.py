"""The krafka exception hierarchy.

Every error krafka raises is a `KrafkaError`. Retriable conditions (a leader moved, a broker
restarted) set `retriable = True` so callers and the retry loops can tell them apart without
matching on types. Broker error codes map onto one class each (see `krafka.protocol.errors`).
"""

from __future__ import annotations


class KrafkaError(Exception):
    """Base class of every krafka error."""

    retriable: bool = False


class RetriableError(KrafkaError):
    """A condition that may succeed when retried."""

    retriable = True


class CorruptRecordError(KrafkaError):
    """Record bytes are malformed: CRC mismatch, bad length, bad varint, oversize payload.

    Raised for any hostile or damaged input to the record codec; `offset` is the byte offset in
    the buffer given to the decoder where the bad item starts, when known.
    """

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message if offset is None else f"{message} (at byte {offset})")
        self.offset = offset


class UnsupportedCodecError(KrafkaError):
    """A compression codec the record batch names is unknown or its library is missing."""
