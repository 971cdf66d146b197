"""Coordinator conversations of the idempotent and transactional producer, on `KafkaClient`.

InitProducerId (v3+, so epochs can be bumped; older brokers get a clear
`UnsupportedVersionError`), AddPartitionsToTxn, AddOffsetsToTxn + TxnOffsetCommit, EndTxn.
Retriable answers (coordinator moving or loading, CONCURRENT_TRANSACTIONS) are retried with
backoff until `timeout`; PRODUCER_FENCED / INVALID_PRODUCER_EPOCH become `ProducerFencedError`.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio

from krafka.errors import (
    InvalidProducerEpochError,
    KafkaTimeoutError,
    KrafkaError,
    ProducerFencedError,
    UnsupportedVersionError,
    error_for_code,
)
from krafka.io.client import CoordinatorType, KafkaClient
from krafka.protocol import ApiKey
from krafka.sansio.producer import wire
from krafka.sansio.producer.config import ProducerConfig
from krafka.sansio.producer.idempotence import ProducerIdentity

_FENCED: Final = frozenset({ProducerFencedError.code, InvalidProducerEpochError.code})
_COORDINATOR_MOVED: Final = frozenset({15, 16})


def raise_for(code: int, what: str) -> None:
    """Raise the error for a non-zero code (fencing always as `ProducerFencedError`)."""
    if code == 0:
        return
    if code in _FENCED:
        raise ProducerFencedError(f"{what}: producer fenced (error {code})")
    raise error_for_code(code, f"{what} failed (error code {code})")


class TxnCoordinator:
    """Requests to the producer-id / transaction coordinator, with retries."""

    def __init__(self, client: KafkaClient, config: ProducerConfig) -> None:
        self.client = client
        self.config = config
        self.backoff = config.retry_backoff
        self.timeout = max(config.request_timeout, 5.0)

    async def retrying(self, what: str, attempt: Callable[[], Awaitable[int]]) -> None:
        """Run `attempt` (returning an error code) until it succeeds or fails for good."""
        deadline = anyio.current_time() + self.timeout
        failures = 0
        while True:
            try:
                code = await attempt()
            except KrafkaError as exc:
                if not exc.retriable or anyio.current_time() >= deadline:
                    raise
                code = -2
            if code == 0:
                return
            retriable = code == -2 or error_for_code(code).retriable
            if code in _COORDINATOR_MOVED:
                self.client.report_error(code)
            if not retriable:
                raise_for(code, what)
            if anyio.current_time() >= deadline:
                raise KafkaTimeoutError(
                    f"{what}: still failing after {self.timeout}s (error {code})"
                )
            failures += 1
            delay = min(1.0, self.backoff * 2 ** (failures - 1)) * (0.8 + 0.4 * random.random())
            await anyio.sleep(delay)

    async def _to_coordinator(self, request: Any, *, max_version: int | None = None) -> Any:
        txn_id = self.config.transactional_id
        if txn_id is None:
            return await self.client.send(request, max_version=max_version)
        return await self.client.send_to_coordinator(
            txn_id, request, key_type=CoordinatorType.TRANSACTION, max_version=max_version
        )

    async def init_producer_id(self, current: ProducerIdentity | None) -> ProducerIdentity:
        """A producer id and epoch; with `current`, bump its epoch (KIP-360)."""
        node = None
        if self.config.transactional_id is not None:
            broker = await self.client.find_coordinator(
                self.config.transactional_id, CoordinatorType.TRANSACTION
            )
            node = broker.node_id
        version = await self.client.api_version(ApiKey.INIT_PRODUCER_ID, node)
        if version < wire.INIT_PRODUCER_ID_MIN_VERSION:
            raise UnsupportedVersionError(
                f"idempotent/transactional producing needs InitProducerId v3+, the broker "
                f"offers v{version} at most; use enable_idempotence=False"
            )
        result: list[ProducerIdentity] = []

        async def attempt() -> int:
            request = wire.init_producer_id_request(self.config, current)
            response = await self._to_coordinator(request)
            if response.error_code == 0:
                result.append(ProducerIdentity(response.producer_id, response.producer_epoch))
            return int(response.error_code)

        await self.retrying("InitProducerId", attempt)
        return result[0]

    async def add_partitions(self, identity: ProducerIdentity, tps: list[tuple[str, int]]) -> None:
        txn_id = self._txn_id()

        async def attempt() -> int:
            response = await self._to_coordinator(
                wire.add_partitions_request(txn_id, identity, tps),
                max_version=wire.ADD_PARTITIONS_MAX_VERSION,
            )
            codes = set(wire.add_partitions_errors(response).values()) - {0}
            # OPERATION_NOT_ATTEMPTED (55) accompanies the real error on other partitions.
            codes.discard(55)
            return max(codes, key=lambda c: c in _FENCED, default=0)

        await self.retrying("AddPartitionsToTxn", attempt)

    async def send_offsets(
        self,
        identity: ProducerIdentity,
        offsets: Mapping[tuple[str, int], tuple[int, str | None]],
        group: GroupMetadata,
    ) -> None:
        txn_id = self._txn_id()

        async def add() -> int:
            response = await self._to_coordinator(
                wire.add_offsets_request(txn_id, identity, group.group_id)
            )
            return int(response.error_code)

        await self.retrying("AddOffsetsToTxn", add)
        request = wire.txn_offset_commit_request(
            txn_id,
            identity,
            offsets,
            group.group_id,
            group.generation_id,
            group.member_id,
            group.group_instance_id,
        )

        async def commit() -> int:
            response = await self.client.send_to_coordinator(group.group_id, request)
            codes = set(wire.txn_offset_commit_errors(response).values()) - {0}
            return max(codes, key=lambda c: c in _FENCED, default=0)

        await self.retrying("TxnOffsetCommit", commit)

    async def end_txn(self, identity: ProducerIdentity, committed: bool) -> None:
        txn_id = self._txn_id()

        async def attempt() -> int:
            response = await self._to_coordinator(wire.end_txn_request(txn_id, identity, committed))
            return int(response.error_code)

        await self.retrying("EndTxn(commit)" if committed else "EndTxn(abort)", attempt)

    def _txn_id(self) -> str:
        if self.config.transactional_id is None:
            raise KrafkaError("not a transactional producer")
        return self.config.transactional_id


@dataclass(frozen=True, slots=True)
class GroupMetadata:
    """The consumer group a transaction commits offsets for (Java's ConsumerGroupMetadata)."""

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None

    @classmethod
    def of(cls, value: Any) -> GroupMetadata:
        """From a group id string or any object with `group_id` (a consumer's group metadata)."""
        if isinstance(value, GroupMetadata):
            return value
        if isinstance(value, str):
            return cls(value)
        return cls(
            str(value.group_id),
            int(getattr(value, "generation_id", -1)),
            str(getattr(value, "member_id", "") or ""),
            getattr(value, "group_instance_id", None),
        )


def normalize_offsets(offsets: Mapping[Any, Any]) -> dict[tuple[str, int], tuple[int, str | None]]:
    """`{TopicPartition | (topic, partition): OffsetAndMetadata | int}` -> plain tuples."""
    out: dict[tuple[str, int], tuple[int, str | None]] = {}
    for tp, value in offsets.items():
        key = (str(tp.topic), int(tp.partition)) if hasattr(tp, "topic") else (tp[0], int(tp[1]))
        if isinstance(value, int):
            out[key] = (value, "")
        else:
            out[key] = (int(value.offset), getattr(value, "metadata", "") or "")
    return out
