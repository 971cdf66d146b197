"""DEBUG lines for every request a client sends and every answer (logger `krafka.wire`).

One line per request (API, version, correlation id, broker) and one per outcome (the same, the
time it took, and the error codes the answer carries, top-level and per partition, counted per
code rather than listed per record). Callers check `log.isEnabledFor(DEBUG)` first, so a
client logging at INFO or above pays one check per request. Nothing here prints a request's
or an answer's contents: no credential can reach the log.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from krafka.errors import KrafkaError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.schema import Struct
from krafka.sansio.responses import java_api_name

log = logging.getLogger("krafka.wire")

#: How deep an answer's structs are searched for error codes (topics -> partitions -> ...).
_DEPTH = 4


def request_sent(api_key: int, version: int, cid: int, where: str, node: int) -> None:
    log.debug(
        "send %s v%d correlation_id=%d to %s (node %d)",
        java_api_name(api_key),
        version,
        cid,
        where,
        node,
    )


def response_received(
    api_key: int,
    version: int,
    cid: int,
    where: str,
    node: int,
    latency: float | None,
    response: Any,
) -> None:
    log.debug(
        "recv %s v%d correlation_id=%d from %s (node %d) in %s: %s",
        java_api_name(api_key),
        version,
        cid,
        where,
        node,
        _ms(latency),
        error_summary(response),
    )


def request_failed(
    cid: int, where: str, node: int, waited: float | None, error: KrafkaError
) -> None:
    log.debug(
        "fail correlation_id=%d to %s (node %d) after %s: %s: %s",
        cid,
        where,
        node,
        _ms(waited),
        type(error).__name__,
        error,
    )


def error_summary(response: Any) -> str:
    """`ok`, or the error codes in `response` with how often each occurs
    (`NOT_LEADER_OR_FOLLOWER x3, UNKNOWN_TOPIC_OR_PARTITION`)."""
    if response is None:
        return "no response expected"
    codes: Counter[int] = Counter()
    _collect(response, codes, _DEPTH)
    if not codes:
        return "ok"
    return ", ".join(
        _code_name(code) + (f" x{count}" if count > 1 else "") for code, count in codes.items()
    )


def _collect(struct: Any, codes: Counter[int], depth: int) -> None:
    for spec in getattr(struct, "_FIELDS", ()):
        value = getattr(struct, spec.name, None)
        if spec.name.endswith("error_code"):
            if isinstance(value, int) and value != 0:
                codes[value] += 1
        elif depth and isinstance(value, list) and value and isinstance(value[0], Struct):
            for item in value:
                _collect(item, codes, depth - 1)
        elif depth and isinstance(value, Struct):
            _collect(value, codes, depth - 1)


def _code_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


def _ms(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds * 1000:.1f} ms"


__all__ = ["error_summary", "log", "request_failed", "request_sent", "response_received"]
