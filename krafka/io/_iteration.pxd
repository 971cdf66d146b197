cdef object ready_c(object value)
