"""The mechanism: tables of Java/librdkafka properties, each naming the keyword it fills.

An `Option` says which setting a property fills and how its value is converted (properties
files give strings: `"5"`, `"true"`; `.ms` values become seconds). An `OptionTable` is one
client kind's properties (built on a shared table), the properties it accepts and ignores
(with the reason), and `finishers` that turn settings which only mean something together
(`security.protocol` + `ssl.*` -> an `ssl.SSLContext`) into constructor keywords.
"""

from __future__ import annotations

import difflib
import importlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from krafka.errors import ConfigError
from krafka.sansio.secret import Secret, as_secret

log = logging.getLogger(__name__)

Converter = Callable[[Any], Any]
Settings = dict[str, Any]
#: Turns some settings into constructor keywords (returns the new settings); raises ConfigError.
Finisher = Callable[[Settings], Settings]


@dataclass(frozen=True, slots=True)
class Option:
    """A property fills setting `name` with `convert(value)`."""

    name: str
    convert: Converter


@dataclass(frozen=True, slots=True)
class OptionTable:
    """The properties one kind of client accepts (`base`'s too), in Java/librdkafka spelling."""

    kind: str
    options: Mapping[str, Option]
    base: OptionTable | None = None
    #: Properties accepted without effect in krafka -> why (logged when given).
    ignored: Mapping[str, str] = field(default_factory=dict)
    #: Properties krafka refuses -> why (ConfigError with that reason).
    unsupported: Mapping[str, str] = field(default_factory=dict)
    finishers: Sequence[Finisher] = ()

    def __post_init__(self) -> None:
        _TABLES[self.kind] = self

    def chain(self) -> list[OptionTable]:
        """This table and its bases, the most general first."""
        return ([] if self.base is None else self.base.chain()) + [self]

    def option(self, prop: str) -> Option | None:
        for table in reversed(self.chain()):
            found = table.options.get(prop)
            if found is not None:
                return found
        return None

    def known(self) -> list[str]:
        """Every property this table accepts."""
        return sorted({p for t in self.chain() for p in (*t.options, *t.ignored)})

    def why_ignored(self, prop: str) -> str | None:
        return next((t.ignored[prop] for t in self.chain() if prop in t.ignored), None)

    def why_unsupported(self, prop: str) -> str | None:
        return next((t.unsupported[prop] for t in self.chain() if prop in t.unsupported), None)


_TABLES: dict[str, OptionTable] = {}


def table_for(kind: str | OptionTable) -> OptionTable:
    """The table of a client kind: a table itself, or its name (`"producer"`), whose module
    `krafka.config.<name>` is imported on first use."""
    if isinstance(kind, OptionTable):
        return kind
    if kind not in _TABLES:
        module = f"krafka.config.{kind}"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    try:
        return _TABLES[kind]
    except KeyError:
        raise ConfigError(f"no configuration table for {kind!r} clients") from None


def keywords_from_config(config: Mapping[str, Any], kind: str | OptionTable) -> Settings:
    """Constructor keywords of a `kind` client from Java/librdkafka properties.

    Values may be strings (a properties file) or typed values; `.ms` properties become seconds.
    Unknown properties raise `ConfigError` naming the closest valid one; two properties that
    set the same thing to different values (`linger.ms` and `queue.buffering.max.ms`) too.
    """
    table = table_for(kind)
    settings: Settings = {}
    source: dict[str, str] = {}
    problems: list[str] = []
    ignored: list[str] = []
    for prop, value in config.items():
        option = table.option(prop)
        if option is None:
            if table.why_ignored(prop) is not None:
                ignored.append(prop)
            else:
                problems.append(_unknown(table, prop))
            continue
        converted = _convert(prop, option, value)
        if option.name in settings and settings[option.name] != converted:
            problems.append(f"{source[option.name]} and {prop} both set {option.name}")
        settings[option.name] = converted
        source[option.name] = prop
    if problems:
        raise ConfigError(f"{table.kind} configuration: " + "; ".join(problems))
    for prop in ignored:
        log.info("%s property %s has no effect: %s", table.kind, prop, table.why_ignored(prop))
    for each in table.chain():
        for finish in each.finishers:
            settings = finish(settings)
    return settings


def _unknown(table: OptionTable, prop: str) -> str:
    reason = table.why_unsupported(prop)
    if reason is not None:
        return f"{prop} is not supported: {reason}"
    close = difflib.get_close_matches(prop, table.known(), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown property {prop!r}{hint}"


def _convert(prop: str, option: Option, value: Any) -> Any:
    try:
        return option.convert(value)
    except ConfigError as exc:
        raise ConfigError(f"{prop}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{prop}: cannot use {value!r} ({exc})") from None


# -- converters -----------------------------------------------------------------------------------


def as_is(value: Any) -> Any:
    """Python objects (a partitioner, interceptors, a token provider) pass unchanged."""
    return value


def secret(value: Any) -> Secret:
    """A password or token, masked from here on (its value never appears in an error)."""
    if isinstance(value, str | bytes | Secret):
        return as_secret(value)
    raise ConfigError("expected a string")


def text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value


def optional_text(value: Any) -> str | None:
    """A string; empty means unset (as in properties files)."""
    return None if value is None or value == "" else text(value)


def integer(value: Any) -> int:
    if isinstance(value, bool):
        raise TypeError("expected an integer, not a bool")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("expected an integer")
    return int(value)


def number(value: Any) -> float:
    if isinstance(value, bool):
        raise TypeError("expected a number, not a bool")
    return float(value)


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError("expected true or false")


def millis(value: Any) -> float:
    """Milliseconds (Kafka) -> seconds (krafka)."""
    return number(value) / 1000.0


def kbytes(value: Any) -> int:
    return integer(value) * 1024


def listing(value: Any) -> list[str]:
    """`"a, b"` or `["a", "b"]` -> `["a", "b"]`."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    if isinstance(value, Iterable):
        return [text(item) for item in value]
    raise TypeError("expected a comma-separated string or a list")


def choice(*allowed: str, upper: bool = False) -> Converter:
    """One of `allowed` (case-insensitive), normalised to its spelling in `allowed`."""
    by_key = {a.upper(): a for a in allowed}

    def convert(value: Any) -> str:
        found = by_key.get(text(value).strip().upper())
        if found is None:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return found.upper() if upper else found

    return convert


def table(kind: str, entries: Mapping[str, tuple[str, Converter]], **kw: Any) -> OptionTable:
    """`OptionTable(kind, {prop: Option(name, convert)})` from `{prop: (name, convert)}`."""
    options = {prop: Option(name, convert) for prop, (name, convert) in entries.items()}
    return OptionTable(kind, options, **kw)
