"""One admin call as a sans-IO machine on the coordinator contract (Java's AdminApiDriver).

An operation holds the items of one call (topics, groups, partitions ...), a `Routing` that
places each item on a broker and a `Handler` that builds the requests and reads the answers.
On every step, items without a broker are located (lookups go out), items with one are batched
per broker into the handler's requests, and answers become per-item outcomes
(`krafka.sansio.admin.outcome`): retriable ones back off with the shared `Backoff`, moved
brokers are located again, and the call's deadline bounds it all. When every item is settled
the operation emits `Completed(op, {item: value or KrafkaError})` — or `Failed(op, error)`
when no item got an answer at all (see `krafka.sansio.admin.results`).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from krafka.errors import KafkaTimeoutError, KrafkaError, ProtocolError
from krafka.protocol.schema import Request
from krafka.sansio.actions import Completed, Failed, SendRequest, Versioned, next_op
from krafka.sansio.admin.outcome import (
    Done,
    Fail,
    ItemResult,
    Remap,
    Resend,
    Retry,
    for_failure,
)
from krafka.sansio.admin.routing import Routing, Target
from krafka.sansio.backoff import Backoff, BackoffPolicy

K = TypeVar("K", bound=Hashable)

#: Java's retry.backoff.ms / retry.backoff.max.ms; retries end at the call's deadline.
DEFAULT_RETRY_BACKOFF: Final = BackoffPolicy(initial=0.1, maximum=1.0, max_retries=None)


@dataclass(frozen=True, slots=True)
class Call(Generic[K]):
    """One request carrying some items; `max_version` / `min_version` bound the negotiation."""

    request: Request[Any] | Versioned[Any]
    keys: tuple[K, ...]
    max_version: int | None = None
    min_version: int | None = None


class Handler(ABC, Generic[K]):
    """Builds the requests of one kind of admin call and reads their answers."""

    #: Names the call in timeout errors ("create topics").
    what: str = "admin request"

    def describe(self, key: K) -> str:
        """The item as error messages name it."""
        return repr(key)

    @abstractmethod
    def requests(self, target: Target, keys: Sequence[K]) -> list[Call[K]]:
        """The requests carrying `keys` to `target`; every key in exactly one of them."""

    @abstractmethod
    def on_response(self, call: Call[K], target: Target, response: Any) -> Mapping[K, ItemResult]:
        """What the answer says about each key of `call` (a key left out fails)."""

    def on_failure(self, call: Call[K], error: KrafkaError) -> Mapping[K, ItemResult]:
        """`call` got no answer; by default a retriable failure finds the broker again."""
        return dict.fromkeys(call.keys, for_failure(error))


@dataclass(slots=True, eq=False)
class _Item(Generic[K]):
    key: K
    backoff: Backoff
    target: Target | None = None
    in_flight: bool = False
    settled: bool = False
    value: Any = None
    answered: bool = False
    last_error: KrafkaError | None = None


@dataclass(slots=True, eq=False)
class _Sent(Generic[K]):
    call: Call[K]
    target: Target


class AdminOperation(Generic[K]):
    """Carry out one admin call for `keys` within `timeout` seconds of `start(now)`."""

    def __init__(
        self,
        handler: Handler[K],
        routing: Routing[K],
        keys: Iterable[K],
        *,
        timeout: float,
        backoff: BackoffPolicy = DEFAULT_RETRY_BACKOFF,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.handler = handler
        self.routing = routing
        self.timeout = timeout
        self._rand = rand
        self._items: dict[K, _Item[K]] = {k: _Item(k, Backoff(backoff)) for k in keys}
        self._sent: dict[SendRequest[Any], _Sent[K]] = {}
        self._events: list[Any] = []
        self._deadline: float | None = None
        self._finished = False
        self._now = 0.0
        #: The id of the one call this operation carries out (unique among every machine:
        #: several operations run side by side in one driver).
        self.op = next_op()

    def start(self, now: float) -> int:
        """Begin; the returned operation id is answered by `Completed` or `Failed`."""
        self._deadline = now + self.timeout
        self._now = now
        return self.op

    @property
    def finished(self) -> bool:
        return self._finished

    # -- the contract ---------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        self._now = now
        actions: list[Any] = []
        if self._deadline is not None and not self._finished:
            if now >= self._deadline:
                self._time_out()
            else:
                actions.extend(self._locate(now))
                actions.extend(self._send(now))
            self._maybe_finish()
        actions.extend(self._events)
        self._events = []
        return actions

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        if self.routing.owns(sent):
            self.routing.on_response(sent, response, now)
            return
        entry = self._sent.pop(sent, None)
        if entry is None or self._finished:
            return
        try:
            results = self.handler.on_response(entry.call, entry.target, response)
        except (KrafkaError, ValueError) as exc:
            error = ProtocolError(f"{self.handler.what}: cannot read the answer: {exc!r}")
            results = dict.fromkeys(entry.call.keys, Fail(error, whole=True))
        self._settle(entry, results, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if self.routing.owns(sent):
            self.routing.on_failure(sent, error, now)
            return
        entry = self._sent.pop(sent, None)
        if entry is None or self._finished:
            return
        self._settle(entry, self.handler.on_failure(entry.call, error), now)

    def next_deadline(self) -> float | None:
        if self._deadline is None or self._finished:
            return None
        times = [self._deadline]
        for item in self._items.values():
            if not item.settled and not item.in_flight and item.backoff.retry_at > self._now:
                times.append(item.backoff.retry_at)
        routed = self.routing.next_deadline()
        if routed is not None and routed > self._now:
            times.append(routed)
        return min(times)

    # -- steps ----------------------------------------------------------------------------------

    def _pending(self, now: float) -> list[_Item[K]]:
        return [
            i
            for i in self._items.values()
            if not i.settled and not i.in_flight and i.backoff.wait_time(now) <= 0
        ]

    def _locate(self, now: float) -> list[SendRequest[Any]]:
        unplaced = [i.key for i in self._pending(now) if i.target is None]
        if not unplaced:
            return []
        placed, lookups = self.routing.locate(unplaced, now)
        for key, placement in placed.items():
            item = self._items[key]
            if isinstance(placement, Done | Fail | Retry | Remap | Resend):
                self._apply(item, placement, now)
            else:
                item.target = placement
        return lookups

    def _send(self, now: float) -> list[SendRequest[Any]]:
        by_target: dict[Target, list[K]] = {}
        for item in self._pending(now):
            if item.target is not None:
                by_target.setdefault(item.target, []).append(item.key)
        out: list[SendRequest[Any]] = []
        for target, keys in by_target.items():
            for call in self.handler.requests(target, keys):
                sent = SendRequest(
                    target, call.request, max_version=call.max_version, min_version=call.min_version
                )
                self._sent[sent] = _Sent(call, target)
                for key in call.keys:
                    self._items[key].in_flight = True
                out.append(sent)
        return out

    def _settle(self, entry: _Sent[K], results: Mapping[K, ItemResult], now: float) -> None:
        for key in entry.call.keys:
            item = self._items[key]
            item.in_flight = False
            result = results.get(key)
            if result is None:
                error = ProtocolError(
                    f"{self.handler.what}: the answer left out {self.handler.describe(key)}"
                )
                result = Fail(error, whole=True)
            self._apply(item, result, now)

    def _apply(self, item: _Item[K], result: ItemResult, now: float) -> None:
        if item.settled:
            return
        if isinstance(result, Done):
            item.settled, item.value, item.answered = True, result.value, True
        elif isinstance(result, Fail):
            item.settled, item.value = True, result.error
            item.answered |= not result.whole
        elif isinstance(result, Retry | Remap):
            item.last_error = result.error
            item.answered |= not result.whole
            item.backoff.failed(now, self._rand)
            if isinstance(result, Remap):
                item.target = None
                self.routing.forget(item.key)

    def _time_out(self) -> None:
        for item in self._items.values():
            if item.settled:
                continue
            last = f" (last error: {item.last_error})" if item.last_error is not None else ""
            item.value = KafkaTimeoutError(
                f"{self.handler.what}: no result for {self.handler.describe(item.key)} "
                f"within {self.timeout:g}s{last}"
            )
            item.settled = True

    def _maybe_finish(self) -> None:
        if not all(item.settled for item in self._items.values()):
            return
        self._finished = True
        items = list(self._items.values())
        if items and not any(i.answered for i in items):
            self._events.append(Failed(self.op, items[0].value))
            return
        self._events.append(Completed(self.op, {i.key: i.value for i in items}))


__all__ = ["DEFAULT_RETRY_BACKOFF", "AdminOperation", "Call", "Handler"]
