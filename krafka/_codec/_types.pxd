# Compiled value types of the codec (twins of the dataclasses in types.py).
from libc.stdint cimport int64_t


cdef class Record:
    # read-only from Python through T_OBJECT_EX member slots installed by _types.pyx (which
    # CPython's specialising interpreter reads inline), not Cython properties
    cdef object offset
    cdef object timestamp
    cdef object key
    cdef object value
    cdef object headers


cdef class BatchHeader:
    cdef readonly Py_ssize_t byte_offset
    cdef readonly Py_ssize_t byte_length
    cdef readonly int64_t base_offset
    cdef readonly int magic
    cdef readonly unsigned int crc
    cdef readonly int attributes
    cdef readonly object last_offset_delta
    cdef readonly object first_timestamp
    cdef readonly object max_timestamp
    cdef readonly object producer_id
    cdef readonly object producer_epoch
    cdef readonly object base_sequence
    cdef readonly object record_count
    cdef readonly object partition_leader_epoch


cdef class RecordBatch:
    # integer fields live as C values and become Python ints only when read; `nulls` marks the
    # v2-only fields a legacy entry lacks (bit i set: field i is None, see _types.pyx)
    cdef int64_t _base_offset, _producer_id, _first_timestamp, _max_timestamp
    cdef int64_t _crc
    cdef int _partition_leader_epoch, _producer_epoch, _base_sequence, _last_offset_delta
    cdef Py_ssize_t _batch_length
    cdef int nulls
    cdef readonly int magic
    cdef readonly object compression
    cdef readonly object timestamp_type
    cdef readonly bint is_transactional
    cdef readonly bint is_control
    cdef readonly object records
    cdef readonly int attributes
    cdef readonly object wrapper_timestamp


cdef Record new_record(object offset, object timestamp, object key, object value, object headers)
