"""Incremental fetch sessions (KIP-227), one per broker, as Java's FetchSessionHandler.

The first Fetch to a broker is *full* (epoch 0: every partition); the broker answers with a
session id, and later Fetches are *incremental*: only partitions added or whose fetch data
changed, plus those to forget, at the next epoch. The broker then answers only partitions
with news. Any doubt (an error, an unexpected partition) falls back to a full request:

* FETCH_SESSION_ID_NOT_FOUND: the broker lost the session, start a new one (session id 0);
* any other top-level error, INVALID_FETCH_SESSION_EPOCH, or an answer naming a partition the
  session does not hold: close the session and open a new one (same id, epoch 0);
* the broker answering session id 0: sessionless, every request full;
* Fetch below v7 knows no sessions: every request is full.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.consumer.fetch_data import PartitionFetchData
from krafka.structs import TopicPartition

INVALID_SESSION_ID: Final = 0
INITIAL_EPOCH: Final = 0
FINAL_EPOCH: Final = -1
_MAX_EPOCH: Final = 2**31 - 1
SESSION_MIN_VERSION: Final = 7
TOPIC_ID_MIN_VERSION: Final = 13


def next_epoch(epoch: int) -> int:
    """The epoch after `epoch`; wraps to 1 (0 means 'new session')."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_EPOCH else epoch + 1


@dataclass(frozen=True, slots=True)
class FetchSessionRequest:
    """What to put in the next Fetch to this broker."""

    session_id: int
    epoch: int
    to_send: Mapping[TopicPartition, PartitionFetchData]
    to_forget: tuple[TopicPartition, ...] = ()
    to_replace: tuple[TopicPartition, ...] = ()

    @property
    def full(self) -> bool:
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)


class FetchSessionHandler:
    """The client side of one broker's fetch session."""

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
        self._partitions: dict[TopicPartition, PartitionFetchData] = {}
        self._topic_ids: dict[str, uuid.UUID] = {}

    @property
    def partitions(self) -> Mapping[TopicPartition, PartitionFetchData]:
        """What the broker's session holds once the last request is answered."""
        return self._partitions

    def build(
        self,
        wanted: Mapping[TopicPartition, PartitionFetchData],
        *,
        version: int,
        topic_ids: Mapping[str, uuid.UUID] | None = None,
    ) -> FetchSessionRequest:
        """The request for fetching exactly `wanted` now; the session assumes it is sent."""
        ids = dict(topic_ids or {})
        if version < SESSION_MIN_VERSION:
            self._partitions, self._topic_ids = dict(wanted), ids
            return FetchSessionRequest(INVALID_SESSION_ID, FINAL_EPOCH, dict(wanted))
        if self.epoch == INITIAL_EPOCH:
            self._partitions, self._topic_ids = dict(wanted), ids
            return FetchSessionRequest(self.session_id, INITIAL_EPOCH, dict(wanted))
        to_send: dict[TopicPartition, PartitionFetchData] = {}
        forget: list[TopicPartition] = []
        replace: list[TopicPartition] = []
        for tp, data in self._partitions.items():
            if tp not in wanted:
                forget.append(tp)
            elif version >= TOPIC_ID_MIN_VERSION and _changed_id(tp.topic, self._topic_ids, ids):
                replace.append(tp)
                to_send[tp] = wanted[tp]
            elif wanted[tp] != data:
                to_send[tp] = wanted[tp]
        for tp, data in wanted.items():
            if tp not in self._partitions:
                to_send[tp] = data
        self._partitions, self._topic_ids = dict(wanted), ids
        return FetchSessionRequest(
            self.session_id, self.epoch, to_send, tuple(forget), tuple(replace)
        )

    def handle_response(self, response: Any, version: int) -> bool:
        """Advance the session; False means the response's partition data must be ignored."""
        if version < SESSION_MIN_VERSION:
            return int(response.error_code) == ErrorCode.NONE
        code = int(response.error_code)
        if code != ErrorCode.NONE:
            if code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND:
                self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
            else:
                self.epoch = INITIAL_EPOCH
            return False
        session_id = int(response.session_id)
        if self._unexpected_partitions(response):
            self.epoch = INITIAL_EPOCH
            return False
        if session_id == INVALID_SESSION_ID:
            self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
        elif self.epoch == INITIAL_EPOCH:
            self.session_id, self.epoch = session_id, 1
        else:
            self.epoch = next_epoch(self.epoch)
        return True

    def handle_error(self) -> None:
        """The request got no answer: the next one closes this session and opens a new one."""
        self.epoch = INITIAL_EPOCH

    def close_request(self) -> FetchSessionRequest | None:
        """A Fetch that closes the session on shutdown (None when there is none)."""
        if self.session_id == INVALID_SESSION_ID:
            return None
        request = FetchSessionRequest(self.session_id, FINAL_EPOCH, {})
        self.session_id, self.epoch, self._partitions = INVALID_SESSION_ID, INITIAL_EPOCH, {}
        return request

    def _unexpected_partitions(self, response: Any) -> bool:
        names = {v: k for k, v in self._topic_ids.items()}
        for topic in response.responses:
            name = str(topic.topic) or names.get(topic.topic_id, "")
            for part in topic.partitions:
                if TopicPartition(name, int(part.partition_index)) not in self._partitions:
                    return True
        return False


def _changed_id(topic: str, old: Mapping[str, uuid.UUID], new: Mapping[str, uuid.UUID]) -> bool:
    return topic in old and topic in new and old[topic] != new[topic]


__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "INVALID_SESSION_ID",
    "FetchSessionHandler",
    "FetchSessionRequest",
    "next_epoch",
]
