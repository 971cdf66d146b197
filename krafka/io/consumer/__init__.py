"""The consumer on anyio: `Consumer` is the façade; the fetch path is sans-IO
(`krafka.sansio.consumer`)."""

from krafka.io.consumer.compacted import CompactedTopicConsumer
from krafka.io.consumer.consumer import Consumer
from krafka.io.consumer.settings import ConsumerInterceptor, ConsumerSettings
from krafka.sansio.consumer.compacted_table import CompactedTable, TableChange
from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch

__all__ = [
    "CompactedTable",
    "CompactedTopicConsumer",
    "Consumer",
    "ConsumerInterceptor",
    "ConsumerRecord",
    "ConsumerSettings",
    "FetchedBatch",
    "TableChange",
]
