"""Receive buffers (pure-Python twin of `_buffer.receive_buffer`).

A large frame (a Fetch response of a megabyte or more) is received straight into a bytearray
of its size. `bytearray(size)` writes zeros over all of it only for the socket to overwrite
them: the compiled twin leaves the bytes as allocated. Either way the receiver fills every byte
before the frame is handed on, so what was there before is never read.
"""

from __future__ import annotations


def receive_buffer(size: int) -> bytearray:
    """A bytearray of `size` bytes for a receiver to fill completely."""
    if size < 0:
        raise ValueError(f"a receive buffer of {size} bytes")
    return bytearray(size)
