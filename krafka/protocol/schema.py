"""The runtime model of Kafka's message schemas: field specs and the `Struct` base class.

The generated modules in `krafka.protocol.messages` declare one slotted dataclass per
struct and describe its wire layout as a tuple of `FieldSpec`. Encoding and decoding are done by
per-(class, version) functions that `krafka.protocol._compile` generates on first use; if a fast
function fails, the reference interpreter in `krafka.protocol._interp` runs the same input again
to raise a precise `LocalProtocolError` / `RemoteProtocolError` naming the field.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NamedTuple, TypeVar

MAX_VERSION = 0x7FFF
NO_VERSIONS = (1, 0)
ZERO_UUID = uuid.UUID(int=0)

Buffer = bytes | bytearray | memoryview
S = TypeVar("S", bound="Struct")
R_co = TypeVar("R_co", covariant=True)

INT_KINDS = {
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
    "bool": "?",
}
"""Fixed-size scalar kinds and their `struct` format characters (big-endian)."""


class _Fresh:
    """Default of a generated `__init__`'s list and struct keywords: omitted, the field gets a
    new empty list or a new default struct (a dataclass's `default_factory`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "FRESH"


FRESH: Any = _Fresh()


class FieldSpec(NamedTuple):
    """One field of a struct, as the schema declares it.

    Version ranges are inclusive `(lo, hi)` pairs; an empty range is `(1, 0)`. `struct` is the
    class of a struct-typed field or of the elements of a struct array. `flexible` overrides the
    message's flexible versions for this field (only RequestHeader.ClientId uses it).
    `default` is the schema default; for arrays `()` stands for "a new empty list" and for struct
    fields `...` for "a new default instance" (`None` is null for both).
    """

    name: str
    wire: str
    kind: str
    array: bool = False
    versions: tuple[int, int] = (0, MAX_VERSION)
    nullable: tuple[int, int] = NO_VERSIONS
    tagged: tuple[int, int] = NO_VERSIONS
    tag: int = -1
    default: Any = None
    ignorable: bool = False
    struct: Any = None
    flexible: tuple[int, int] | None = None
    map_key: bool = False

    def present(self, version: int) -> bool:
        return self.versions[0] <= version <= self.versions[1]

    def is_tagged(self, version: int) -> bool:
        return self.present(version) and self.tagged[0] <= version <= self.tagged[1]

    def is_nullable(self, version: int) -> bool:
        return self.nullable[0] <= version <= self.nullable[1]

    def default_value(self) -> Any:
        """A fresh default: a new list for arrays, a new default instance for struct fields."""
        if self.default is None:
            return None
        if self.array:
            return []
        if self.kind == "struct":
            return self.struct()
        return self.default

    def is_default(self, value: Any) -> bool:
        if self.default is None:
            return value is None
        if self.array or self.kind in ("bytes", "records"):
            return value is not None and len(value) == 0
        if self.kind == "struct":
            return bool(value == self.struct())
        return bool(value == self.default)


class Struct:
    """Base of every generated struct and message class.

    Subclasses are `@dataclass(slots=True, kw_only=True)` (slotted, not frozen: decoding a Fetch
    response builds one object per partition, and plain slot stores are 4x cheaper than a
    frozen dataclass's `object.__setattr__` calls), with their `__init__` written out by the
    generator and `__repr__` / `__eq__` from here, so that importing a message module generates
    and execs no code (`dataclasses.fields` and `replace` work as on any dataclass; `repr` leaves
    out `explicit_tags` and the `_HIDDEN` credential fields); every field has its
    schema default, plus `unknown_tagged_fields`: `(tag, raw bytes)` pairs read from flexible
    versions that this schema does not know, re-encoded unchanged; and `explicit_tags`: known
    tags that are written even when their value is the default (a decoder records the tags it
    saw, so re-encoding is byte-exact; excluded from equality).
    """

    __slots__ = ()

    _FIELDS: ClassVar[tuple[FieldSpec, ...]] = ()
    _NAME: ClassVar[str] = ""
    _FLEX: ClassVar[tuple[int, int]] = NO_VERSIONS
    _VERSIONS: ClassVar[tuple[int, int]] = (0, MAX_VERSION)
    _HIDDEN: ClassVar[frozenset[str]] = frozenset()

    unknown_tagged_fields: tuple[tuple[int, bytes], ...]
    explicit_tags: frozenset[int]

    if not TYPE_CHECKING:  # hidden from type checkers, so misspelt attributes still fail there

        def __getattr__(self, name: str) -> Any:
            """Default of a field the decoded version lacked (decoders leave those unset)."""
            if name == "unknown_tagged_fields":
                value: Any = ()
            elif name == "explicit_tags":
                value = frozenset()
            else:
                spec = _specs(type(self)).get(name)
                if spec is None:
                    raise AttributeError(
                        f"{type(self).__name__!r} object has no attribute {name!r}"
                    )
                value = spec.default_value()
            object.__setattr__(self, name, value)
            return value

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={getattr(self, name)!r}"
            for name in _compared(type(self))
            if name not in self._HIDDEN
        )
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = _compared(type(self))
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    def encode(self, version: int) -> bytes:
        """The wire bytes of this struct in `version`; raises `LocalProtocolError` if invalid."""
        return _codec.encode(self, version)

    def encode_into(self, parts: list[Buffer], version: int) -> None:
        """Append this struct's wire bytes in `version` to `parts` as pieces, unjoined (a
        `bytes`/`records` field is its own object, not copied): a frame made of several
        structs is joined once. Raises `LocalProtocolError` if invalid (`parts` unchanged)."""
        _codec.encode_into(self, version, parts)

    @classmethod
    def decode(cls: type[S], buffer: Buffer, version: int) -> S:
        """Decode the whole of `buffer`; trailing bytes are an error (`RemoteProtocolError`)."""
        return _codec.decode(cls, buffer, version)

    @classmethod
    def decode_prefix(cls: type[S], buffer: Buffer, version: int, offset: int = 0) -> tuple[S, int]:
        """Decode from `offset`; returns the struct and the offset just past it."""
        return _codec.decode_prefix(cls, buffer, version, offset)


class ApiMessage(Struct):
    """A top-level request or response body (or header / data schema)."""

    __slots__ = ()

    API_KEY: ClassVar[int | None] = None
    MIN_VERSION: ClassVar[int] = 0
    MAX_VERSION: ClassVar[int] = 0
    FLEXIBLE_VERSION: ClassVar[int | None] = None
    LATEST_VERSION_UNSTABLE: ClassVar[bool] = False
    DEPRECATED_VERSIONS: ClassVar[tuple[int, int]] = NO_VERSIONS


_SPECS: dict[type[Struct], dict[str, FieldSpec]] = {}


def _specs(cls: type[Struct]) -> dict[str, FieldSpec]:
    specs = _SPECS.get(cls)
    if specs is None:
        specs = _SPECS[cls] = {f.name: f for f in cls._FIELDS}
    return specs


_COMPARED: dict[type[Struct], tuple[str, ...]] = {}


def _compared(cls: type[Struct]) -> tuple[str, ...]:
    """The attributes equality compares and `repr` shows: the fields, then the unknown tags."""
    names = _COMPARED.get(cls)
    if names is None:
        names = _COMPARED[cls] = (*(f.name for f in cls._FIELDS), "unknown_tagged_fields")
    return names


def index_by_key(items: list[Any]) -> dict[Any, Any]:
    """Map the elements of a `mapKey` array by their key field(s) (a tuple if several)."""
    if not items:
        return {}
    keys = [f.name for f in type(items[0])._FIELDS if f.map_key]
    if len(keys) == 1:
        return {getattr(i, keys[0]): i for i in items}
    return {tuple(getattr(i, k) for k in keys): i for i in items}


class Request(ApiMessage, Generic[R_co]):
    """A request body, typed with the body of its response: `client.send(req: Request[R]) -> R`.

    `ProduceRequest` is `Request[ProduceResponse | None]`: with acks=0 no response comes back.
    """

    __slots__ = ()

    API_KEY: ClassVar[int]


class Response(ApiMessage):
    """A response body."""

    __slots__ = ()


# Last: the codec imports the classes above (a function-level import would run per call).
from krafka.protocol import _codec  # noqa: E402
