"""The producer's send loop on anyio: drives the sans-IO `Sender` on a `KafkaClient`.

One task loops: expire old batches, `drain` the sendable ones into Produce plans, start one task
per plan (the client queues Produce requests to a broker in call order, and a drain makes at
most one plan per broker, so requests reach each broker in drain order), refresh the metadata
of the topics the drain asks for, then sleep until a batch is due or something wakes it. Every
answer goes back to the `Sender` and wakes whoever waits for progress (flush, a full buffer).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

import anyio
import anyio.lowlevel

from krafka.errors import InvalidStateError, KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.io.host import TaskHost
from krafka.sansio.producer import wire
from krafka.sansio.producer.accumulator import RecordAccumulator
from krafka.sansio.producer.config import ProducerConfig
from krafka.sansio.producer.sender import ProduceRequestPlan, Sender

log = logging.getLogger(__name__)
#: After sealing a batch, give the loop, the request task and the connection's writer a turn
#: each, so the batch is on the wire while the caller fills the next one.
_TURNS_PER_SEAL: Final = 3
#: How often the loop looks again at a batch that is due but could not be sent (no leader,
#: too many requests in flight) while no answer is outstanding to wake it.
_BLOCKED_POLL: Final = 0.005


class _NoEvent(anyio.Event):
    """Stands in for an event until `run` makes real ones (an anyio.Event can only be made
    inside an event loop)."""

    def __new__(cls) -> _NoEvent:
        return object.__new__(cls)

    def set(self) -> None:
        return None

    def is_set(self) -> bool:
        return False

    async def wait(self) -> None:
        raise InvalidStateError("producer is not started")

    def statistics(self) -> anyio.EventStatistics:
        raise InvalidStateError("producer is not started")


class SenderLoop:
    """Runs the `Sender`; `error` is set once it stopped for good (then `on_stop` is called)."""

    def __init__(
        self,
        client: KafkaClient,
        sender: Sender,
        accumulator: RecordAccumulator,
        config: ProducerConfig,
        host: TaskHost,
        *,
        on_answer: Callable[[], None] = lambda: None,
        on_stop: Callable[[KrafkaError], None] = lambda error: None,
    ) -> None:
        self.client = client
        self.sender = sender
        self.accumulator = accumulator
        self.config = config
        self.error: KrafkaError | None = None
        self._host = host
        self._on_answer = on_answer
        self._on_stop = on_stop
        self._wakeup: anyio.Event = _NoEvent()
        self._progress: anyio.Event = _NoEvent()
        self._stale: set[str] = set()
        self._refreshing = False

    # -- what the producer calls ----------------------------------------------------------------

    def wake(self) -> None:
        """Something may be sendable now (a batch opened, a partition joined a transaction)."""
        self._wakeup.set()

    async def sealed(self) -> None:
        """A batch was sealed: let it reach the wire before the caller goes on."""
        self._wakeup.set()
        for _ in range(_TURNS_PER_SEAL):
            await anyio.lowlevel.checkpoint()

    def notify_progress(self) -> None:
        """Wake every task waiting for a batch to finish (flush, buffer back-pressure)."""
        event, self._progress = self._progress, anyio.Event()
        event.set()

    def fail_queued(self, error: KrafkaError) -> None:
        """Fail every record not yet sent (abort, an abortable transaction)."""
        self.sender.fail_all(error)
        self.notify_progress()

    def stop(self, error: KrafkaError) -> None:
        """Stop for good: fail what is queued; later sends raise `error`."""
        if self.error is None:
            self.error = error
            self._on_stop(error)
        self.fail_queued(error)

    def abandon(self, error: KrafkaError) -> None:
        """Fail everything, queued and in flight (closing)."""
        self.sender.abandon(error)
        self.notify_progress()

    async def flush(self, timeout: float | None) -> None:
        """Send everything queued now (ignoring linger) and wait until it is acknowledged."""
        self.accumulator.flush()
        pending = [*self.accumulator.batches(), *self.sender.in_flight_batches()]
        try:
            with anyio.fail_after(timeout):
                while True:
                    pending = [batch for batch in pending if not batch.settled]
                    if not pending:
                        return
                    self._raise_error()
                    self._wakeup.set()
                    with anyio.move_on_after(0.5):
                        await self._progress.wait()
        except TimeoutError:
            raise KafkaTimeoutError(f"flush did not finish within {timeout}s") from None
        finally:
            self.accumulator.flush_done()

    async def wait_for_room(self, size: int, max_block: float) -> None:
        """Wait until `size` bytes fit in `buffer_memory` (at most `max_block` s)."""
        self._wakeup.set()
        try:
            with anyio.fail_after(max_block):
                while not self.accumulator.has_room(size):
                    self._raise_error()
                    await self._progress.wait()
                self._raise_error()
        except TimeoutError:
            raise KafkaTimeoutError(
                f"buffer_memory={self.config.buffer_memory} stayed full for {max_block}s"
            ) from None

    def _raise_error(self) -> None:
        if self.error is not None:
            raise self.error

    # -- the loop -------------------------------------------------------------------------------

    async def run(self) -> None:
        self._wakeup, self._progress = anyio.Event(), anyio.Event()
        try:
            while True:
                await self._step()
        except KrafkaError as exc:
            log.error("producer stopped: %s", exc)
            self.stop(exc)
        except Exception as exc:  # a bug must fail the records, not leave them hanging
            log.exception("producer send loop crashed")
            self.stop(KrafkaError(f"producer send loop crashed: {exc!r}"))

    async def _step(self) -> None:
        sender = self.sender
        self._wakeup = wakeup = anyio.Event()
        now = anyio.current_time()
        sender.expire(now)
        drained = sender.drain(now, self.client.metadata)
        self._refresh(drained.stale_topics)
        for plan in drained.plans:
            self._host.start_soon(self._produce, plan, name="krafka produce request")
        self._on_answer()  # partitions that want to join a transaction may be known now
        ready_at = self.accumulator.next_ready_at()
        if ready_at is None:
            await wakeup.wait()
            return
        delay = max(ready_at - anyio.current_time(), 0.0)
        if delay == 0.0:  # due but blocked: an answer will wake the loop, else look again soon
            delay = _BLOCKED_POLL if sender.in_flight == 0 else 1.0
        with anyio.move_on_after(delay):
            await wakeup.wait()

    async def _produce(self, plan: ProduceRequestPlan) -> None:
        request = wire.produce_request(plan, self.config)
        try:
            response = await self.client.send(
                request, node_id=plan.node_id, timeout=self.config.request_timeout
            )
        except KrafkaError as exc:
            self.sender.on_failure(plan, exc, anyio.current_time())
        else:
            results = wire.produce_results(response)
            for (topic, _), result in results.items():
                if result.error_code:
                    self.client.report_error(result.error_code, topic)
            throttle = (response.throttle_time_ms or 0) / 1000 if response is not None else 0.0
            self.sender.on_response(plan, results, anyio.current_time(), throttle)
        self._wakeup.set()
        self.notify_progress()
        self._on_answer()

    def _refresh(self, topics: frozenset[str]) -> None:
        self._stale |= topics
        if self._stale and not self._refreshing:
            wanted, self._stale = sorted(self._stale), set()
            self._refreshing = True
            self._host.start_soon(self._refresh_now, wanted, name="krafka producer metadata")

    async def _refresh_now(self, topics: list[str]) -> None:
        try:
            await self.client.refresh_metadata(topics)
        except KrafkaError as exc:
            log.debug("metadata refresh for %s failed: %s", topics, exc)
            await anyio.sleep(self.config.retry_backoff)
        finally:
            self._refreshing = False
            self._wakeup.set()
