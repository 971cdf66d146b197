# cython: language_level=3
"""Compiled twin of `buffer.py`: a receive buffer whose bytes are not zeroed first."""

from cpython.bytearray cimport PyByteArray_FromStringAndSize


def receive_buffer(Py_ssize_t size):
    """A bytearray of `size` bytes holding whatever the allocator left there: the receiver
    overwrites every byte before anything reads it (`krafka.sansio.framing`)."""
    if size < 0:
        raise ValueError(f"a receive buffer of {size} bytes")
    return PyByteArray_FromStringAndSize(NULL, size)
