"""Helpers for running krafka against a real local broker (tests, the demo, benchmarks)."""

from krafka.testing.broker import LocalBroker, free_port

__all__ = ["LocalBroker", "free_port"]
