# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of `varint.py` (same names, same errors)."""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from krafka._codec._cvarint cimport (
    read_uvarint64, read_varint, read_varlong, size_uvarint, write_uvarint, write_varint,
    write_varlong,
)

from krafka.errors import CorruptRecordError

from krafka._codec.varint import (  # noqa: F401 - same fixed-width structs for both twins
    INT8, INT16, INT32, INT64, UINT32, decode_compact_length, encode_compact_length,
    size_of_varint, size_of_varlong,
)


cdef const uint8_t* _ptr(const uint8_t[::1] mv):
    return &mv[0] if mv.shape[0] else <const uint8_t*>""


def decode_unsigned_varint(buf, Py_ssize_t pos=0):
    cdef const uint8_t[::1] mv = memoryview(buf).cast("B")
    cdef uint64_t raw
    cdef Py_ssize_t start = pos
    if pos < 0 or read_uvarint64(_ptr(mv), &pos, mv.shape[0], 5, &raw) < 0:
        raise CorruptRecordError("truncated or over-long unsigned varint", start)
    return <uint64_t>(raw & 0xFFFFFFFF), pos


def decode_varint(buf, Py_ssize_t pos=0):
    cdef const uint8_t[::1] mv = memoryview(buf).cast("B")
    cdef int32_t v
    cdef Py_ssize_t start = pos
    if pos < 0 or read_varint(_ptr(mv), &pos, mv.shape[0], &v) < 0:
        raise CorruptRecordError("truncated or over-long varint", start)
    return v, pos


def decode_varlong(buf, Py_ssize_t pos=0):
    cdef const uint8_t[::1] mv = memoryview(buf).cast("B")
    cdef int64_t v
    cdef Py_ssize_t start = pos
    if pos < 0 or read_varlong(_ptr(mv), &pos, mv.shape[0], &v) < 0:
        raise CorruptRecordError("truncated or over-long varlong", start)
    return v, pos


def encode_unsigned_varint(value):
    if not 0 <= value <= 0xFFFFFFFF:
        raise ValueError(f"unsigned varint out of range: {value}")
    cdef uint8_t tmp[10]
    return (<char*>tmp)[:write_uvarint(tmp, <uint64_t>value)]


def encode_varint(value):
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"varint out of range: {value}")
    cdef uint8_t tmp[10]
    return (<char*>tmp)[:write_varint(tmp, <int32_t>value)]


def encode_varlong(value):
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"varlong out of range: {value}")
    cdef uint8_t tmp[10]
    return (<char*>tmp)[:write_varlong(tmp, <int64_t>value)]
