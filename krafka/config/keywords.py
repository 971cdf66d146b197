"""Constructor keywords checked at the public clients, with errors that teach.

An unknown keyword raises `UnknownKeywordError` (a `TypeError` too, as Python's own is) naming
the public class - not the internal one it would have reached - and what to write instead:

* another library's spelling (aiokafka's and kafka-python's `linger_ms`, `compression_type`,
  `value_serializer`) is looked up, dotted (`linger.ms`), in the very `OptionTable` that
  `from_config` reads, so the hint names krafka's keyword with its unit converted
  (`krafka takes seconds: linger=0.005`) or why krafka has none;
* anything else gets the closest krafka keyword (difflib).

A dict of properties passed where the bootstrap servers go (confluent-kafka's
`Producer({"bootstrap.servers": ...})`) is pointed to `from_config`.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Final

from krafka.config.options import OptionTable, kbytes, millis, table_for
from krafka.errors import UnknownKeywordError

#: Other libraries' keywords whose dotted spelling is not the Java/librdkafka property.
_SPELLED_ELSEWHERE: Final = {
    "max_batch_size": "batch.size",  # aiokafka
    "sasl_plain_username": "sasl.username",  # aiokafka, kafka-python
    "sasl_plain_password": "sasl.password",
    "ssl_cafile": "ssl.ca.location",
    "ssl_certfile": "ssl.certificate.location",
    "ssl_keyfile": "ssl.key.location",
    "api_version": "api.version.request",  # aiokafka, kafka-python
}
#: The client kinds and their public classes, to name a keyword that belongs to another one.
_KINDS: Final = {
    "producer": "Producer",
    "consumer": "Consumer",
    "share_consumer": "ShareConsumer",
    "admin": "AdminClient",
}


def check_arguments(
    owner: str,
    kind: str,
    bootstrap_servers: object,
    extra: Mapping[str, Any],
    *accepting: Callable[..., Any],
) -> None:
    """Refuse a properties dict as `bootstrap_servers`, and any keyword of `extra` that none of
    the `accepting` callables (the public class, the settings, `KafkaClient`) takes."""
    if isinstance(bootstrap_servers, Mapping):
        raise UnknownKeywordError(
            f"{owner}() takes the bootstrap servers ('host:port') first, not a dict of "
            f"Java/librdkafka properties: pass those to {owner}.from_config(...), as in "
            f"{owner}.from_config({{'bootstrap.servers': 'localhost:9092', ...}})"
        )
    known = _keywords(accepting)
    unknown = [name for name in extra if name not in known]
    if unknown:
        hints = [_explain(owner, table_for(kind), known, name, extra[name]) for name in unknown]
        raise UnknownKeywordError(f"{owner}() got " + "; ".join(hints))


@functools.cache
def _keywords(accepting: tuple[Callable[..., Any], ...]) -> frozenset[str]:
    return frozenset(
        name
        for each in accepting
        for name, param in inspect.signature(each).parameters.items()
        if param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY) and name != "self"
    )


def _explain(owner: str, table: OptionTable, known: frozenset[str], name: str, value: Any) -> str:
    head = f"an unexpected keyword argument {name!r}"
    prop = name if "." in name else _SPELLED_ELSEWHERE.get(name, name.replace("_", "."))
    option = table.option(prop)
    if option is not None:
        return f"{head}: {_equivalent(owner, prop, option.name, option.convert, value, known)}"
    ignored = table.why_ignored(prop) or table.why_unsupported(prop)
    if ignored is not None:
        return f"{head} ({prop} elsewhere): krafka has no such keyword: {ignored}"
    elsewhere = _other_kind(table.kind, prop)
    if elsewhere is not None:
        return f"{head}: {prop} is a setting of {elsewhere}, not of {owner}"
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f"{head} (did you mean {close[0]!r}?)" if close else head


def _other_kind(kind: str, prop: str) -> str | None:
    """The public class (other than `kind`'s) whose table takes `prop`."""
    for other, owner in _KINDS.items():
        if other != kind and table_for(other).option(prop) is not None:
            return owner
    return None


def _equivalent(
    owner: str,
    prop: str,
    keyword: str,
    convert: Callable[[Any], Any],
    value: Any,
    known: frozenset[str],
) -> str:
    """krafka's keyword for property `prop`, with `value` in krafka's unit."""
    if keyword not in known:
        return f"pass the property instead: {owner}.from_config({{{prop!r}: ...}})"
    if convert is millis:
        try:
            seconds = millis(value)
        except (TypeError, ValueError):
            return f"krafka takes seconds: {keyword}=<{prop} / 1000>"
        return f"krafka takes seconds: {keyword}={seconds:g}"
    if convert is kbytes:
        try:
            return f"krafka takes bytes: {keyword}={kbytes(value)}"
        except (TypeError, ValueError):
            return f"krafka takes bytes: {keyword}=<{prop} * 1024>"
    return f"krafka's keyword is {keyword}={value!r}"
