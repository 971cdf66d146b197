"""KIP-714 client metrics on anyio: one client's `TelemetryMachine`, run by its `KafkaClient`.

Every client (Producer, Consumer, ShareConsumer, AdminClient) owns one. It starts with the
client, pushes what the cluster's client-metrics subscriptions ask for, makes the terminating
push when the client closes, and answers `client_instance_id(timeout)` as Java's
`clientInstanceId(Duration)`: the broker-assigned UUID, None when none came within `timeout`,
`IllegalStateError` when the client was built with `enable_metrics_push=False`.
"""

from __future__ import annotations

import logging
import platform
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import anyio

import krafka
from krafka.errors import IllegalStateError
from krafka.io.attached import AttachedMachine, Stopped
from krafka.io.client import KafkaClient
from krafka.sansio.telemetry import (
    ClientKind,
    TelemetryConfig,
    TelemetryMachine,
    telemetry_samples,
)
from krafka.sansio.telemetry.machine import InstanceIdAssigned, TelemetryStopped

log = logging.getLogger(__name__)


class ClientTelemetry:
    """One client's telemetry; `metrics` reads that client's `metrics()`."""

    def __init__(
        self,
        client: KafkaClient,
        kind: ClientKind,
        metrics: Callable[[], Mapping[str, Any]],
        client_id: str,
    ) -> None:
        self.enabled = client.enable_metrics_push
        resource = {
            "client_software_name": "krafka",
            "client_software_version": krafka.__version__,
            "client_id": client_id,
            "process.runtime.name": platform.python_implementation(),
        }
        self.machine = TelemetryMachine(
            lambda: telemetry_samples(kind, metrics()),
            time.time_ns,
            TelemetryConfig(resource=resource),
        )
        self._driver = AttachedMachine(
            client, self.machine, on_event=self._on_event, name=f"krafka {kind.value} telemetry"
        )
        self._settled = anyio.Event()
        self._stopped = anyio.Event()
        self._running = False

    async def start(self) -> None:
        """Subscribe (GetTelemetrySubscriptions) in the background; nothing when disabled."""
        if not self.enabled or self._running:
            return
        self._running = True
        self._driver.start()

    async def client_instance_id(self, timeout: float) -> uuid.UUID | None:
        """The broker-assigned instance id, waiting up to `timeout` seconds for it (0: do not
        wait); None when telemetry got none (yet, or the cluster does not support it)."""
        if timeout < 0:
            raise ValueError("timeout must not be negative")
        if not self.enabled:
            raise IllegalStateError("telemetry is not enabled (enable_metrics_push=False)")
        if self._running:
            with anyio.move_on_after(timeout):
                await self._settled.wait()
        return self.machine.client_instance_id

    async def close(self, timeout: float) -> None:
        """The terminating push (when subscribed), within `timeout` seconds; then stop."""
        if not self._running:
            return
        self._running = False
        self.machine.close(anyio.current_time())
        self._driver.wake()
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout):
            await self._stopped.wait()
        self._driver.stop()

    def _on_event(self, event: object) -> None:
        if isinstance(event, InstanceIdAssigned):
            self._settled.set()
            return
        if isinstance(event, TelemetryStopped) and event.reason is not None:
            log.info("client telemetry stopped: %s", event.reason)
        if isinstance(event, TelemetryStopped | Stopped):
            self._settled.set()
            self._stopped.set()


__all__ = ["ClientTelemetry"]
