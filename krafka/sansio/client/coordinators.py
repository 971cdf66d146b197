"""Requests for a `Coordinator(key, key_type)` target: found, cached, followed when it moves.

One `CoordinatorLink` per coordinator (`krafka.sansio.coordinator`): requests for an unknown
coordinator wait while it is looked up (FindCoordinator on the control lane, retried with
backoff until their deadline); an answer saying it moved (NOT_COORDINATOR,
COORDINATOR_NOT_AVAILABLE) or a lost connection forgets it and sends the request again to
the one found next; COORDINATOR_LOAD_IN_PROGRESS sends it again after backoff. A request whose
deadline passes gets the last answer (or a timeout naming the lookup's last error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from krafka.errors import KafkaTimeoutError, KrafkaError
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.actions import Broker, Coordinator, SendRequest
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.client.routed import Routed, Waiting
from krafka.sansio.codes import COORDINATOR_MOVED_CODES
from krafka.sansio.coordinator import CoordinatorLink

#: Codes in a coordinator's answer that send the request again.
_RESEND: frozenset[int] = COORDINATOR_MOVED_CODES | {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}


class Coordinators:
    """Every coordinator a core's requests went to, and the requests waiting for one."""

    def __init__(self, backoff: BackoffPolicy, rand: Callable[[], float]) -> None:
        self._backoff = backoff
        self._rand = rand
        self._links: dict[Coordinator, CoordinatorLink] = {}
        self._parked: dict[Coordinator, list[Routed]] = {}
        self._lookups: dict[SendRequest[Any], Coordinator] = {}
        #: Coordinators the embedder asked to find (no request waits for them).
        self._wanted: set[Coordinator] = set()

    def link(self, coordinator: Coordinator) -> CoordinatorLink:
        link = self._links.get(coordinator)
        if link is None:
            link = CoordinatorLink(coordinator.key, coordinator.key_type, self._backoff, self._rand)
            self._links[coordinator] = link
        return link

    def target(self, coordinator: Coordinator) -> Broker | None:
        return self.link(coordinator).target()

    def park(self, coordinator: Coordinator, routed: Routed) -> None:
        routed.waiting = Waiting.COORDINATOR
        self._parked.setdefault(coordinator, []).append(routed)

    def want(self, coordinator: Coordinator) -> None:
        """Look `coordinator` up even though no request waits for it."""
        self._wanted.add(coordinator)

    def lookups(self, now: float) -> list[SendRequest[Any]]:
        """FindCoordinator requests to send now, for coordinators requests wait for."""
        if not self._parked and not self._wanted:
            return []
        out = []
        needed = [c for c, parked in self._parked.items() if parked] + list(self._wanted)
        for coordinator in needed:
            if coordinator not in self._lookups.values():
                sent = self.link(coordinator).lookup(now)
                if sent is not None:
                    self._lookups[sent] = coordinator
                    out.append(sent)
        return out

    def owns(self, sent: SendRequest[Any]) -> bool:
        return sent in self._lookups

    def answered(
        self, sent: SendRequest[Any], response: Any | None, error: KrafkaError | None, now: float
    ) -> tuple[Coordinator, list[Routed], list[tuple[Routed, KrafkaError]]]:
        """A lookup's outcome: (its coordinator, requests to route now, requests failed for
        good)."""
        coordinator = self._lookups.pop(sent)
        link = self.link(coordinator)
        if error is None:
            link.on_response(sent, response, now)
        else:
            link.on_failure(sent, error, now)
        if link.target() is not None:
            self._wanted.discard(coordinator)
            return coordinator, self._parked.pop(coordinator, []), []
        fatal = link.fatal_error()
        if fatal is not None:
            self._wanted.discard(coordinator)
            return coordinator, [], [(r, fatal) for r in self._parked.pop(coordinator, [])]
        return coordinator, [], []

    def expired(self, now: float) -> list[tuple[Routed, KrafkaError]]:
        """Requests whose deadline passed while their coordinator was unknown."""
        if not self._parked:
            return []
        out = []
        for coordinator, parked in self._parked.items():
            late = [r for r in parked if r.deadline <= now]
            for routed in late:
                parked.remove(routed)
                out.append((routed, self._timeout(coordinator, routed)))
        return out

    def next_deadline(self) -> float | None:
        if not self._parked and not self._wanted:
            return None
        times = [r.deadline for parked in self._parked.values() for r in parked]
        needed = [c for c, parked in self._parked.items() if parked] + list(self._wanted)
        for coordinator in needed:
            retry = self.link(coordinator).next_deadline()
            if retry is not None:
                times.append(retry)
        return min(times, default=None)

    def moved(self, coordinator: Coordinator) -> None:
        """Its connection was lost: look it up again."""
        self.link(coordinator).on_connection_failure()

    def forget_all(self) -> None:
        """The cluster view was dropped (rebootstrap): every coordinator is looked up again."""
        for link in self._links.values():
            link.mark_unknown()

    def on_code(self, coordinator: Coordinator, code: int) -> int | None:
        """A coordinator's answer carried top-level `code`: returned when it sends the request
        again (the coordinator is forgotten when it moved). Codes inside the answer (per group,
        per partition) are the machine's to read; it reports a move with `CoordinatorMoved`."""
        if code not in _RESEND:
            return None
        if code in COORDINATOR_MOVED_CODES:
            self.link(coordinator).mark_unknown()
        return code

    def drain(self) -> list[Routed]:
        """Every waiting request (the core is closing)."""
        out = [r for parked in self._parked.values() for r in parked]
        self._parked.clear()
        self._wanted.clear()
        return out

    def _timeout(self, coordinator: Coordinator, routed: Routed) -> KrafkaError:
        link = self.link(coordinator)
        last = f" (last error: {link.last_error})" if link.last_error else ""
        kind = coordinator.key_type.name.lower()
        return KafkaTimeoutError(f"no coordinator for {kind} {coordinator.key!r} in time{last}")


__all__ = ["Coordinators"]
