"""Loopback ports for test clusters: every listener of every node gets its own port."""

from __future__ import annotations

import socket

from krafka.testing.broker import free_ports


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(24)
    assert len(set(ports)) == 24
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", port))
