"""The consumer, sans-IO.

`ConsumerEngine` is the whole consumer as one machine (`krafka.sansio.actions.Machine`) for one
driver to run: the subscription and assignment (`SubscriptionState`), the fetcher (`Fetcher`:
one Fetch per broker with that broker's fetch session, KIP-227, records decoded lazily),
positions and resets (committed offset, then `initial_offsets`, then the reset policy with
ListOffsets and per-partition backoff), the records handed out but not yet delivered, auto-commit
and one group behind one interface (none, standalone with `assign`, classic or KIP-848 member
with `subscribe`). The application's calls (`assign`, `subscribe`, `poll`, `commit`, `seek`,
`close` ...) are its inputs with `now`; rebalance-listener steps come out as events
(`PartitionsRevoked`, `PartitionsLost`, `PartitionsAssigned`) that the driver runs in the
application's task and answers with `rebalance_done`.
"""

from krafka.sansio.consumer.completed_fetch import CompletedFetch
from krafka.sansio.consumer.config import ConsumerConfig, GroupProtocol
from krafka.sansio.consumer.engine import ConsumerEngine
from krafka.sansio.consumer.events import (
    AutoCommitFailed,
    OffsetsCommitted,
    PartitionsAssigned,
    PartitionsLost,
    PartitionsRevoked,
    PollReady,
    RebalanceEvent,
)
from krafka.sansio.consumer.fetch_data import PartitionFetchData
from krafka.sansio.consumer.fetch_session import FetchSessionHandler, FetchSessionRequest
from krafka.sansio.consumer.fetcher import (
    FetchCompleted,
    FetchConfig,
    Fetcher,
    IsolationLevel,
    RefreshMetadata,
)
from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch
from krafka.sansio.consumer.subscription import ResetStrategy, SubscriptionState
from krafka.sansio.consumer.view import MetadataView

__all__ = [
    "AutoCommitFailed",
    "CompletedFetch",
    "ConsumerConfig",
    "ConsumerEngine",
    "ConsumerRecord",
    "FetchCompleted",
    "FetchConfig",
    "FetchSessionHandler",
    "FetchSessionRequest",
    "FetchedBatch",
    "Fetcher",
    "GroupProtocol",
    "IsolationLevel",
    "MetadataView",
    "OffsetsCommitted",
    "PartitionFetchData",
    "PartitionsAssigned",
    "PartitionsLost",
    "PartitionsRevoked",
    "PollReady",
    "RebalanceEvent",
    "RefreshMetadata",
    "ResetStrategy",
    "SubscriptionState",
]
