"""`PendingCommit`, what `Consumer.commit_async` returns: a commit running in the background."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import anyio

from krafka.errors import InvalidStateError
from krafka.structs import OffsetAndMetadata, TopicPartition

Offsets = Mapping[TopicPartition, OffsetAndMetadata]


class PendingCommit:
    """A commit running in the background (`Consumer.commit_async`): `offsets` are what it
    commits; awaiting it returns when the coordinator answered, raising its error. A commit cut
    short by the consumer closing raises `InvalidStateError` (it may or may not have landed)."""

    __slots__ = ("_done", "_error", "offsets")

    def __init__(self, offsets: Offsets) -> None:
        self.offsets = dict(offsets)
        self._done = anyio.Event()
        self._error: BaseException | None = None

    async def run(self, commit: Callable[[Offsets], Awaitable[None]]) -> None:
        try:
            await commit(self.offsets)
        except Exception as exc:
            self._error = exc
        except BaseException:
            self._error = InvalidStateError(
                "the consumer closed before the commit was answered: the offsets may or may "
                "not be committed"
            )
            raise
        finally:
            self._done.set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def __await__(self):  # type: ignore[no-untyped-def]
        return self._wait().__await__()

    async def _wait(self) -> None:
        await self._done.wait()
        if self._error is not None:
            raise self._error


__all__ = ["Offsets", "PendingCommit"]
