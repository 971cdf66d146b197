"""Kafka's rules for a topic name, checked where an application hands one in (Java's
`Topic.validate`): a wrong name fails at once with a clear error instead of going into the
client's state (the metadata's topics in use) and breaking later calls."""

from __future__ import annotations

import re
from typing import Final

from krafka.errors import InvalidTopicError

MAX_LENGTH: Final = 249
_LEGAL: Final = re.compile(r"[a-zA-Z0-9._-]+")


def check_topic(name: object) -> str:
    """`name` if it is a legal topic name; `TypeError` for a non-`str`, `InvalidTopicError`
    (Kafka's INVALID_TOPIC_EXCEPTION) for a name Kafka refuses."""
    if not isinstance(name, str):
        raise TypeError(f"a topic name is a str, not {type(name).__name__} ({name!r})")
    if not name:
        raise InvalidTopicError("a topic name cannot be empty")
    if name in (".", ".."):
        raise InvalidTopicError(f"{name!r} is not a legal topic name")
    if len(name) > MAX_LENGTH:
        raise InvalidTopicError(
            f"topic name {name[:20]!r}... is {len(name)} characters, more than {MAX_LENGTH}"
        )
    if _LEGAL.fullmatch(name) is None:
        raise InvalidTopicError(
            f"topic name {name!r} may contain only ASCII letters, digits, '.', '_' and '-'"
        )
    return name


__all__ = ["MAX_LENGTH", "check_topic"]
