"""What every sync client is: an async client living on its own `LoopThread`, and the two
descriptors that turn the async client's methods into blocking ones.

    class AdminClient(SyncClient[krafka.AdminClient]):
        _async_class = krafka.AdminClient
        create_topics = blocking(krafka.AdminClient.create_topics)   # coroutine -> blocking
        client = on_loop(...)                                         # plain method, on the loop

`blocking(method)` reads the async method's signature with a `ParamSpec`, so the sync method
type-checks exactly like the async one (arguments and keyword-only options), returns what the
coroutine returns, and raises the exception classes it raises. Calls go through
`SyncClient._invoke` on the loop, which a client overrides to do something first (the
producer hands over the records it queued). `on_loop(method)` does the same for a plain
method whose state lives on the loop (so it is read there, not from another thread).
"""

from __future__ import annotations

import contextlib
import functools
import sys
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from types import TracebackType
from typing import Any, ClassVar, Concatenate, Generic, ParamSpec, TypeVar, overload

from krafka.errors import InvalidStateError
from krafka.sync.loop import LoopThread

if sys.version_info >= (3, 11):
    from typing import Self
else:  # pragma: no cover
    from typing_extensions import Self

A = TypeVar("A")
P = ParamSpec("P")
R = TypeVar("R")

#: How long `close()` waits for the thread after the client closed, beyond the close timeout.
JOIN_MARGIN = 2.0


class SyncClient(Generic[A]):
    """An async client (`_async_class`) created, started and closed on a private loop thread.
    Constructed with the async client's arguments; `from_config` with its properties."""

    _async_class: ClassVar[Any]
    #: Whether a blocking call runs on its thread what the loop hands it (`LoopThread.on_caller`).
    _serves_callers: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The async client's constructor arguments (`bootstrap_servers=...`, ...)."""
        self._setup(functools.partial(self._async_class, *args, **self._options(kwargs)))

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> Self:
        """A client from Java/librdkafka properties, as the async client's `from_config`."""
        self = cls.__new__(cls)
        options = self._options(overrides)
        self._setup(functools.partial(cls._async_class.from_config, config, **options))
        return self

    def _options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Hook: the keyword options as the async client gets them."""
        return options

    def _setup(self, make: Callable[[], A]) -> None:
        self._closed = False
        self._thread = LoopThread(f"krafka {type(self).__name__.lower()}")
        try:
            self._client: A = self._thread.call(_make_and_start, make)
        except BaseException:
            self._thread.stop(JOIN_MARGIN)
            raise
        self._finalizer = weakref.finalize(self, _abandon, self._thread, self._client)
        self._started()

    def _started(self) -> None:
        """Hook: the async client is running."""

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def async_client(self) -> A:
        """The async client underneath (use it only from its loop: `run` a coroutine there)."""
        return self._client

    def start(self) -> None:
        """Nothing to do: the constructor started the client (kept for the async API's
        shape)."""

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, timeout: float | None = None) -> None:
        """Close the client (as the async `close(timeout)`), then stop its thread, joining it
        within `timeout` (plus a small margin). Idempotent."""
        if self._closed:
            return
        self._closed = True
        tracing = getattr(self._client, "tracing", None)
        if tracing is not None:  # a `process` span current in this thread (krafka.io.tracing)
            tracing.finish_current()
        try:
            self._thread.call(self._close_on_loop, timeout, serve=self._serves_callers)
        finally:
            self._finalizer.detach()
            self._thread.stop(None if timeout is None else timeout + JOIN_MARGIN)

    async def _close_on_loop(self, timeout: float | None) -> None:
        close: Callable[..., Awaitable[None]] = self._client.close  # type: ignore[attr-defined]
        await (close() if timeout is None else close(timeout))
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def run(self, func: Callable[[A], Awaitable[R]]) -> R:
        """Run `func(async_client)` on the client's loop and wait for its result: a way to the
        async API for what the sync methods do not cover."""
        return self._call(func, self._client)

    # -- calls ----------------------------------------------------------------------------------

    def _call(self, func: Callable[..., Awaitable[R]], *args: Any) -> R:
        if self._closed and not (self._serves_callers and self._thread.serving()):
            raise InvalidStateError(f"{type(self).__name__} is closed")
        return self._thread.call(func, *args, serve=self._serves_callers)

    def _drive(self, func: Callable[..., Coroutine[Any, Any, R]], *args: Any) -> R:
        """`_call` with this thread running the loop meanwhile (`LoopThread.drive`)."""
        if self._closed:
            return self._call(func, *args)  # refused or served as `_call` does
        return self._thread.drive(func, *args)

    async def _invoke(
        self, method: Callable[..., Awaitable[R]], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> R:
        """Run on the loop for every `blocking` method (override to do something first)."""
        return await method(self._client, *args, **kwargs)


class blocking(Generic[A, P, R]):
    """A blocking method of a sync client made from the async client's coroutine method."""

    #: Whether the calling thread runs the loop while it waits (`SyncClient._drive`).
    drives = False

    def __init__(self, method: Callable[Concatenate[A, P], Awaitable[R]]) -> None:
        self._method = method
        self.__doc__ = method.__doc__
        self._name = getattr(method, "__name__", "method")

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, obj: SyncClient[Any], owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, obj: SyncClient[Any] | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        method, invoke = self._method, obj._invoke
        call = obj._drive if self.drives else obj._call

        def sync_method(*args: P.args, **kwargs: P.kwargs) -> R:
            result: R = call(invoke, method, args, kwargs)
            return result

        sync_method.__name__ = self._name
        sync_method.__doc__ = self.__doc__
        return sync_method


class driving(blocking[A, P, R]):
    """A `blocking` method that runs the async coroutine with the calling thread running the
    loop (`LoopThread.drive`): what it waits for is read on that thread, with no hand-over."""

    drives = True


class on_loop(Generic[A, P, R]):
    """A method of a sync client that runs the async client's plain method on its loop."""

    def __init__(self, method: Callable[Concatenate[A, P], R]) -> None:
        self._method = method
        self.__doc__ = method.__doc__
        self._name = getattr(method, "__name__", "method")

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, obj: SyncClient[Any], owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, obj: SyncClient[Any] | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        method, client, call = self._method, obj._client, obj._call

        def sync_method(*args: P.args, **kwargs: P.kwargs) -> R:
            result: R = call(_plain, functools.partial(method, client, *args, **kwargs))
            return result

        sync_method.__name__ = self._name
        sync_method.__doc__ = self.__doc__
        return sync_method


async def _plain(func: Callable[[], R]) -> R:
    return func()


def poll_until_closed(poll: Callable[[float], list[R]], closed: Callable[[], bool]) -> Iterator[R]:
    """Records one by one from polls of a second each, until the client is closed (the
    iteration of the sync consumers)."""
    while not closed():
        try:
            records = poll(1.0)
        except InvalidStateError:
            return
        yield from records


async def _make_and_start(make: Callable[[], Any]) -> Any:
    client = make()
    await client.start()
    return client


def _abandon(thread: LoopThread, client: Any) -> None:
    """A sync client was garbage-collected (or the interpreter exits) without `close()`:
    close its async client briefly and stop its thread, so nothing keeps running."""
    if not thread.running:
        return
    with contextlib.suppress(Exception):  # best effort: the loop may be gone at exit
        thread.call(client.close, 1.0)
    thread.stop(JOIN_MARGIN)


__all__ = ["JOIN_MARGIN", "SyncClient", "blocking", "on_loop"]
