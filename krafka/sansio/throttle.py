"""KIP-219: from which response version the *client* must honour `throttle_time_ms`.

Before KIP-219 a broker delayed its response itself; from these versions on it answers at
once and expects the client to hold back further requests (Java's
`AbstractResponse.shouldClientThrottle`). APIs not listed throttle client-side in every version.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from krafka.protocol import ApiKey

CLIENT_THROTTLE_SINCE: Final[Mapping[int, int]] = {
    ApiKey.PRODUCE: 6,
    ApiKey.FETCH: 8,
    ApiKey.LIST_OFFSETS: 3,
    ApiKey.METADATA: 6,
    ApiKey.OFFSET_COMMIT: 4,
    ApiKey.OFFSET_FETCH: 4,
    ApiKey.FIND_COORDINATOR: 2,
    ApiKey.JOIN_GROUP: 3,
    ApiKey.HEARTBEAT: 2,
    ApiKey.LEAVE_GROUP: 2,
    ApiKey.SYNC_GROUP: 2,
    ApiKey.DESCRIBE_GROUPS: 2,
    ApiKey.LIST_GROUPS: 2,
    ApiKey.API_VERSIONS: 2,
    ApiKey.CREATE_TOPICS: 3,
    ApiKey.DELETE_TOPICS: 2,
    ApiKey.DELETE_RECORDS: 1,
    ApiKey.INIT_PRODUCER_ID: 1,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: 1,
    ApiKey.ADD_PARTITIONS_TO_TXN: 1,
    ApiKey.ADD_OFFSETS_TO_TXN: 1,
    ApiKey.END_TXN: 1,
    ApiKey.TXN_OFFSET_COMMIT: 1,
    ApiKey.DESCRIBE_ACLS: 1,
    ApiKey.CREATE_ACLS: 1,
    ApiKey.DELETE_ACLS: 1,
    ApiKey.DESCRIBE_CONFIGS: 2,
    ApiKey.ALTER_CONFIGS: 1,
    ApiKey.ALTER_REPLICA_LOG_DIRS: 1,
    ApiKey.DESCRIBE_LOG_DIRS: 1,
    ApiKey.CREATE_PARTITIONS: 1,
    ApiKey.CREATE_DELEGATION_TOKEN: 1,
    ApiKey.RENEW_DELEGATION_TOKEN: 1,
    ApiKey.EXPIRE_DELEGATION_TOKEN: 1,
    ApiKey.DESCRIBE_DELEGATION_TOKEN: 1,
    ApiKey.DELETE_GROUPS: 1,
}


def client_should_throttle(api_key: int, version: int) -> bool:
    """True if a `throttle_time_ms` in this response is the client's to wait out."""
    return version >= CLIENT_THROTTLE_SINCE.get(int(api_key), 0)
