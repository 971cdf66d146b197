"""`DeliveryFuture`: the `concurrent.futures.Future[RecordMetadata]` that the sync producer's
`send` returns, made cheap enough to create for every record.

A stock `Future` builds a `threading.Condition` when created and must be completed by someone
(here: the loop thread, once per record), which together cost more than sending the record.
This one is lazy on both counts:

* Its state starts as RUNNING from class defaults: creating one sets no attribute.
* The loop thread only hands it the async producer's delivery handle (`_handle`) when the
  record is appended. `done()`, and `result()` / `exception()` once done, read the handle
  directly, from any thread: no lock, no wake-up.
* Only someone who may block or be called back (`result()` while pending, `add_done_callback`,
  `concurrent.futures.wait` / `as_completed`, which all go through `_condition`) makes the
  condition, lazily, and that asks the owner to *watch* the future: the loop thread then
  completes it the standard way (`set_result` / `set_exception`: waiters and callbacks run).
* Until then it cannot be part of a reference cycle, so it is made untracked by the garbage
  collector (`krafka.sync.untracked`) and tracked when its condition or lists are made.

So `wait`, `as_completed` and callbacks work as with any Future, and a record nobody waits
on costs nothing beyond its handle. Callbacks run on whichever thread runs the producer's
loop then (its loop thread, or a thread inside `send` or `flush`: `krafka.sync.loop`): keep
them short; they may `send`, and a blocking method called from them raises.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Final, Protocol

from krafka._twins import implementations, selected
from krafka.sansio.producer.record import RecordMetadata
from krafka.sync.untracked import track

if TYPE_CHECKING:
    from krafka.io.producer import DeliveryHandle

#: `Future._state` values (what `concurrent.futures` sets; compared by value).
RUNNING: Final = "RUNNING"
FINISHED: Final = "FINISHED"
#: Guards the lazy creation of a future's condition and lists (rare: once per waited future).
_CREATE = threading.Lock()


class Watcher(Protocol):
    """Who completes a watched future: the sync producer's loop side."""

    def watch(self, future: DeliveryFuture) -> None: ...


class DeliveryFuture(Future[RecordMetadata]):
    """A record's delivery: `result()` is its `RecordMetadata` or raises its delivery error
    (the async producer's exception classes)."""

    #: The async producer's handle, set on the loop thread when the record is appended (a
    #: slot: a future nobody waits on never gets an instance dict, one object per record).
    __slots__ = ("_handle",)
    _handle: DeliveryHandle

    _state: str = RUNNING
    _result: RecordMetadata | None = None
    _exception: BaseException | None = None
    #: Someone waits or was promised a callback: the loop thread must complete this future.
    _watched: bool = False
    #: Set per producer on a subclass (`future_class`), so creating a future stores nothing.
    _owner: Watcher | None = None

    def __init__(self) -> None:  # Future.__init__ would build the condition at once
        pass

    # -- lazily made parts of a Future ----------------------------------------------------------

    @property
    def _condition(self) -> threading.Condition:  # type: ignore[override]
        cond: threading.Condition | None = self.__dict__.get("_cond")
        if cond is not None:
            return cond
        with _CREATE:
            cond = self.__dict__.get("_cond")
            if cond is None:
                track(self)
                cond = self.__dict__["_cond"] = threading.Condition()
                self._watched = True
                made = True
            else:
                made = False
        if made and self._owner is not None:
            self._owner.watch(self)
        return cond

    @property
    def _waiters(self) -> list[Any]:  # type: ignore[override]
        return self._lazy_list("_waiter_list")

    @property
    def _done_callbacks(self) -> list[Callable[[Future[RecordMetadata]], object]]:
        return self._lazy_list("_callback_list")

    def _lazy_list(self, name: str) -> list[Any]:
        found: list[Any] | None = self.__dict__.get(name)
        if found is None:
            with _CREATE:
                track(self)
                found = self.__dict__.setdefault(name, [])
        return found

    # -- reading without the condition once the record is delivered ------------------------------

    def _delivered(self) -> DeliveryHandle | None:
        """The handle, when the record is done and the future not completed the standard way."""
        if self._state == RUNNING:
            handle = self.handle
            if handle is not None and handle.done:
                return handle
        return None

    @property
    def handle(self) -> DeliveryHandle | None:
        """The async producer's delivery handle (None until the record reached it)."""
        try:
            return self._handle
        except AttributeError:
            return None

    def done(self) -> bool:
        return self._state == FINISHED or self._delivered() is not None

    def result(self, timeout: float | None = None) -> RecordMetadata:
        if self._state == RUNNING:  # the common case first: delivered, not completed
            try:
                sent = self._handle
            except AttributeError:
                pass
            else:
                metadata = sent.delivered()
                if metadata is not None:
                    return metadata
        handle = self._delivered()
        if handle is not None:
            return handle.result()
        return super().result(timeout)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        handle = self._delivered()
        if handle is not None:
            return None if handle.exception() is None else handle_error(handle)
        return super().exception(timeout)

    def add_done_callback(self, fn: Callable[[Future[RecordMetadata]], object]) -> None:
        """As `Future.add_done_callback`: called at once (here) if the record is delivered,
        else on the producer's thread when it is."""
        if self._delivered() is not None:
            self.complete()
        super().add_done_callback(fn)

    # -- completion (the loop thread, or a caller once the record is delivered) -----------------

    def complete(self) -> None:
        """Complete the future from its (done) handle: waiters wake, callbacks run."""
        handle = self.handle
        if handle is None or self._state != RUNNING:
            return
        with self._condition:  # re-entrant: set_result takes it again
            if self._state != RUNNING:
                return
            if handle.exception() is not None:
                self.set_exception(handle_error(handle))
            else:
                self.set_result(handle.result())

    def fail(self, error: BaseException) -> None:
        """The record never reached the producer (its `send` raised)."""
        with self._condition:
            if self._state == RUNNING:
                self.set_exception(error)

    def __repr__(self) -> str:
        state = "finished" if self.done() else "pending"
        return f"<DeliveryFuture {state} at {id(self):#x}>"


def handle_error(handle: DeliveryHandle) -> BaseException:
    """The error a failed handle raises (a fresh copy, as `await handle` gives)."""
    try:
        handle.result()
    except BaseException as exc:
        return exc
    raise AssertionError("a failed handle returned a result")  # pragma: no cover


def _compiled_result() -> Any:
    """`result` from `_result.pyx` (its common case in C), configured; None if not built or
    turned off."""
    found = selected(implementations(None, "krafka.sync._result", "configure", "result"))
    if found is None:
        return None
    configure, result = found
    configure(DeliveryFuture.result, DeliveryFuture)
    return result


_RESULT = _compiled_result()


def future_class(owner: Watcher, *, compiled: bool = True) -> type[DeliveryFuture]:
    """A `DeliveryFuture` subclass bound to `owner`, so creating one stores nothing; its
    `result` is the compiled one when built (`compiled=False`: the Python method)."""
    namespace: dict[str, Any] = {"_owner": owner, "__slots__": ()}
    if compiled and _RESULT is not None:
        namespace["result"] = _RESULT
    return type("DeliveryFuture", (DeliveryFuture,), namespace)


__all__ = ["FINISHED", "RUNNING", "DeliveryFuture", "Watcher", "future_class"]
