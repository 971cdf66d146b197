cdef object alloc_untracked(type cls)
