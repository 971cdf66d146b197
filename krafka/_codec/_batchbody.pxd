# A caller's buffer pinned for C access, and a checked v2 batch body: CRC verified,
# decompressed (capped), record count bounded.
from libc.stdint cimport int32_t, int64_t, uint8_t


cdef class BufferView:
    cdef readonly object obj        # the bytes / bytearray / memoryview given by the caller
    cdef const uint8_t[::1] mv      # pins a non-bytes buffer (a bytearray cannot resize)
    cdef const uint8_t* p
    cdef Py_ssize_t n


cdef class V2Body:
    cdef object owner               # keeps `p` valid: the source buffer or the decompressed bytes
    cdef const uint8_t* p
    cdef Py_ssize_t n
    cdef Py_ssize_t where           # byte offset of the batch in the caller's buffer
    cdef int attributes
    cdef int32_t count
    cdef int64_t base_offset, base_ts, max_ts, producer_id


cdef BufferView view_of(object buf)
cdef V2Body open_v2(object owner, const uint8_t* q, Py_ssize_t start, Py_ssize_t length,
                    bint check_crc, object max_size)
