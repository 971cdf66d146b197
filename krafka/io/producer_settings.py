"""The `Producer`'s keywords -> the sans-IO `ProducerConfig` (with the defaults that depend on
other settings), and Java/librdkafka properties -> those keywords (`krafka.config`)."""

from __future__ import annotations

import selectors
from collections.abc import Mapping
from typing import Any

from krafka.codec import Compression
from krafka.config import keywords_from_config
from krafka.config.options import boolean
from krafka.sansio.producer.config import Acks, ProducerConfig

#: How late the io loops' timers fire at most (`ProducerConfig.timer_slack`): on Linux asyncio
#: and trio wait in epoll, whose timeout is in milliseconds, rounded up.
TIMER_SLACK = (
    0.001 if selectors.DefaultSelector is getattr(selectors, "EpollSelector", None) else 0.0
)


def producer_config(
    *,
    acks: int | str,
    compression: str | Compression | None,
    compression_level: int | None,
    linger: float,
    batch_size: int,
    buffer_memory: int,
    max_request_size: int,
    max_in_flight_requests_per_connection: int,
    retries: int,
    retry_backoff: float,
    retry_backoff_max: float,
    delivery_timeout: float,
    request_timeout: float,
    enable_idempotence: bool | str | None,
    transactional_id: str | None,
    transaction_timeout: float,
) -> ProducerConfig:
    """Idempotence is on by default, off by default when `acks` is not "all" or more than 5
    requests may be in flight (as in Java), and always on with a `transactional_id`."""
    parsed_acks = Acks.parse(acks)
    if isinstance(enable_idempotence, str):
        enable_idempotence = boolean(enable_idempotence)
    if enable_idempotence is None:
        enable_idempotence = transactional_id is not None or (
            parsed_acks is Acks.ALL and max_in_flight_requests_per_connection <= 5
        )
    return ProducerConfig(
        acks=parsed_acks,
        compression=Compression.parse(compression),
        compression_level=compression_level,
        batch_size=int(batch_size),
        linger=float(linger),
        buffer_memory=int(buffer_memory),
        max_request_size=int(max_request_size),
        max_in_flight_requests_per_connection=int(max_in_flight_requests_per_connection),
        retries=int(retries),
        retry_backoff=float(retry_backoff),
        retry_backoff_max=float(retry_backoff_max),
        delivery_timeout=float(delivery_timeout),
        request_timeout=float(request_timeout),
        enable_idempotence=bool(enable_idempotence),
        transactional_id=transactional_id,
        transaction_timeout=float(transaction_timeout),
        timer_slack=TIMER_SLACK,
        gather=True,
    )


def keywords(config: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """`Producer` keywords from properties (`{"bootstrap.servers": ..., "linger.ms": 5}`);
    `overrides` are keywords that win over them."""
    return {**keywords_from_config(config, "producer"), **overrides}
