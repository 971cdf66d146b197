"""Share groups (KIP-932) without I/O: the member, share sessions, records and settlements."""

from krafka.sansio.share.acknowledgements import AcknowledgeType
from krafka.sansio.share.commits import AcknowledgementsCommitted
from krafka.sansio.share.consumer import (
    Phase,
    RecordsAvailable,
    ShareConsumerMachine,
    ShareFetchConfig,
)
from krafka.sansio.share.inflight import AcknowledgementMode
from krafka.sansio.share.member import ShareMember
from krafka.sansio.share.record import ShareRecord

__all__ = [
    "AcknowledgeType",
    "AcknowledgementMode",
    "AcknowledgementsCommitted",
    "Phase",
    "RecordsAvailable",
    "ShareConsumerMachine",
    "ShareFetchConfig",
    "ShareMember",
    "ShareRecord",
]
