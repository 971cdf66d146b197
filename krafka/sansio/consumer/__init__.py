"""The consumer's fetch path, sans-IO.

`SubscriptionState` holds the assigned partitions and their positions (shared with the group
membership); `Fetcher` is the machine a driver runs (`krafka.sansio.actions.Machine`): it plans
one Fetch per broker with that broker's fetch session (`FetchSessionHandler`, KIP-227), turns
answers into `CompletedFetch`es decoded lazily, and hands records out through
`fetched_records` (or raw batches through `fetched_batches`). Its events: `FetchCompleted`
(data arrived: wake a waiting poll) and `RefreshMetadata` (leaders unknown or moved). Positions
a partition lacks are resolved by the driver: committed offsets first, then `initial_offsets`,
then the reset policy (`SubscriptionState.resets_due` / `reset_failed` carry the backoff).
"""

from krafka.sansio.consumer.completed_fetch import CompletedFetch
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

__all__ = [
    "CompletedFetch",
    "ConsumerRecord",
    "FetchCompleted",
    "FetchConfig",
    "FetchSessionHandler",
    "FetchSessionRequest",
    "FetchedBatch",
    "Fetcher",
    "IsolationLevel",
    "PartitionFetchData",
    "RefreshMetadata",
    "ResetStrategy",
    "SubscriptionState",
]
