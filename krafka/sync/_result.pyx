# cython: language_level=3
"""`DeliveryFuture.result` with its common case in C: a record already delivered returns its
`RecordMetadata` straight from its delivery handle, with no Python frame. Everything else
(pending, failed, split, completed the standard way) goes to the Python method, the reference
(`krafka.sync.delivery`), given once by `configure`."""

cdef object _python_result = None


def configure(python_result):
    """The Python `DeliveryFuture.result`, for every case but the common one."""
    global _python_result
    _python_result = python_result


def result(self, timeout=None):
    """See `DeliveryFuture.result`. A delivered handle's metadata is the answer whatever the
    future's state (completing it sets that same metadata), so the state is not read."""
    handle = getattr(self, "_handle", None)
    if handle is not None:
        metadata = handle.delivered()
        if metadata is not None:
            return metadata
    return _python_result(self, timeout)
