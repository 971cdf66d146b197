"""anyio drivers connecting the sans-IO state machines to sockets (asyncio and trio alike).

`krafka.io.client.KafkaClient` is the low-level client the Producer, Consumer and admin client
are built on: the anyio driver of a sans-IO `krafka.sansio.client.ClientCore` (TLS/SASL
connections, metadata, and request routing to any broker, a partition leader or a group
coordinator).
"""

from krafka.io.client import KafkaClient
from krafka.io.transport import TransportConfig, create_ssl_context
from krafka.sansio.client import Lane
from krafka.sansio.coordinator import CoordinatorType

__all__ = [
    "CoordinatorType",
    "KafkaClient",
    "Lane",
    "TransportConfig",
    "create_ssl_context",
]
