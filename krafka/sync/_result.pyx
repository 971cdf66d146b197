# cython: language_level=3
"""`DeliveryFuture.result` with its common case in C: a record already delivered returns its
`RecordMetadata` straight from its delivery handle, with no Python frame and no attribute
lookup (the handle read from the future's slot, its `delivered` called in C). Everything else
(pending, failed, split, completed the standard way) goes to the Python method, the reference
(`krafka.sync.delivery`), given once by `configure`."""

from cpython.object cimport PyObject

from krafka.io._handle cimport DeliveryHandle
from krafka.sansio.producer._slots cimport krafka_slot, slot_offset

cdef object _python_result = None
cdef type _future_type = None
#: Where a `DeliveryFuture` keeps its `_handle` (a slot of the class `configure` is given).
cdef Py_ssize_t _HANDLE = -1


def configure(python_result, type future_type):
    """The Python `DeliveryFuture.result`, for every case but the common one, and the class
    (`DeliveryFuture`) whose `_handle` slot the common case reads."""
    global _python_result, _future_type, _HANDLE
    _HANDLE = slot_offset(future_type, "_handle")
    _future_type = future_type
    _python_result = python_result


def result(self, timeout=None):
    """See `DeliveryFuture.result`. A delivered handle's metadata is the answer whatever the
    future's state (completing it sets that same metadata), so the state is not read."""
    cdef PyObject* slot
    if isinstance(self, _future_type):
        slot = krafka_slot(self, _HANDLE)
        handle = None if slot == NULL else <object>slot
    else:
        handle = getattr(self, "_handle", None)
    if type(handle) is DeliveryHandle:
        metadata = (<DeliveryHandle>handle).delivered()
    else:
        metadata = None if handle is None else handle.delivered()
    if metadata is not None:
        return metadata
    return _python_result(self, timeout)
