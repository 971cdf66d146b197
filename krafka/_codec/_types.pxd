# Compiled value types of the codec (twins of the dataclasses in types.py).
from libc.stdint cimport int64_t


cdef class Record:
    cdef readonly object offset
    cdef readonly object timestamp
    cdef readonly object key
    cdef readonly object value
    cdef readonly object headers


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
    cdef readonly object base_offset
    cdef readonly int magic
    cdef readonly object crc
    cdef readonly object compression
    cdef readonly object timestamp_type
    cdef readonly bint is_transactional
    cdef readonly bint is_control
    cdef readonly object partition_leader_epoch
    cdef readonly object producer_id
    cdef readonly object producer_epoch
    cdef readonly object base_sequence
    cdef readonly object records
    cdef readonly int attributes
    cdef readonly object batch_length
    cdef readonly object last_offset_delta
    cdef readonly object first_timestamp
    cdef readonly object max_timestamp
    cdef readonly object wrapper_timestamp


cdef Record new_record(object offset, object timestamp, object key, object value, object headers)
