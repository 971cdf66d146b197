"""Entry points for encoding and decoding: the compiled fast path, the interpreter on failure."""

from __future__ import annotations

from typing import Any, TypeVar

import krafka.errors as _errors
from krafka.protocol import _compile, _interp
from krafka.protocol.schema import Buffer, Struct

S = TypeVar("S", bound=Struct)

#: The compiled functions already built (read directly: this runs for every message).
_ENCODERS = _compile._ENCODERS
_DECODERS = _compile._DECODERS


def _version_error(cls: type[Struct], version: object) -> _errors.UnsupportedVersionError:
    """A version outside what `cls` has (each entry point checks inline: it runs per message)."""
    lo, hi = cls._VERSIONS
    return _errors.UnsupportedVersionError(
        f"{cls._NAME} v{version!r} is not supported (valid versions {lo}-{hi})"
    )


def _view(buffer: Buffer) -> memoryview:
    mv = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    return mv


def encode(obj: Struct, version: int) -> bytes:
    parts: list[Buffer] = []
    encode_into(obj, version, parts)
    return b"".join(parts)


def encode_into(obj: Struct, version: int, parts: list[Buffer]) -> None:
    """Append `obj`'s wire pieces to `parts` (left as it was if `obj` is invalid)."""
    cls = type(obj)
    lo, hi = cls._VERSIONS
    if not (isinstance(version, int) and lo <= version <= hi):
        raise _version_error(cls, version)
    try:
        fn = _ENCODERS[cls, version]
    except KeyError:
        fn = _compile.encoder(cls, version)
    mine: list[Any] = []
    try:
        fn(obj, mine.append)
    except Exception as exc:
        _interp.encode(obj, version)  # raises the precise LocalProtocolError
        raise _errors.LocalProtocolError(f"{cls._NAME} v{version}: {exc!r}") from exc
    parts += mine


def decode_prefix(cls: type[S], buffer: Buffer, version: int, offset: int = 0) -> tuple[S, int]:
    lo, hi = cls._VERSIONS
    if not (isinstance(version, int) and lo <= version <= hi):
        raise _version_error(cls, version)
    try:
        fn = _DECODERS[cls, version]
    except KeyError:
        fn = _compile.decoder(cls, version)
    buf = _view(buffer)
    if not 0 <= offset <= len(buf):
        raise ValueError(f"offset {offset} outside a buffer of {len(buf)} bytes")
    try:
        obj, pos = fn(buf, offset)
    except Exception as exc:
        _interp.decode(cls, buf, version, offset, False)  # raises the precise RemoteProtocolError
        raise _errors.RemoteProtocolError(f"{cls._NAME} v{version}: {exc!r}") from exc
    return obj, pos


def decode(cls: type[S], buffer: Buffer, version: int) -> S:
    obj, pos = decode_prefix(cls, buffer, version)
    end = len(_view(buffer))
    if pos != end:
        raise _errors.RemoteProtocolError(
            f"{cls._NAME} v{version}: {end - pos} trailing bytes after the message"
        )
    return obj
