"""A wrapper that keeps credentials out of `repr`, `str`, logs and tracebacks."""

from __future__ import annotations

import hmac
from typing import Final

_MASK: Final = "******"


class Secret:
    """Holds a password or token; only `reveal()` gives the value back.

    `repr`/`str` are masked so a secret that ends up in a log line, an exception message or a
    config dump shows `Secret('******')`. Equality is constant-time (`hmac.compare_digest`).
    """

    __slots__ = ("_value",)

    def __init__(self, value: str | bytes | Secret) -> None:
        if isinstance(value, Secret):
            value = value.reveal()
        self._value: str | bytes = value

    def reveal(self) -> str:
        """The secret as text (bytes are decoded as UTF-8)."""
        value = self._value
        return value.decode() if isinstance(value, bytes) else value

    def reveal_bytes(self) -> bytes:
        """The secret as UTF-8 bytes."""
        value = self._value
        return value if isinstance(value, bytes) else value.encode()

    def __repr__(self) -> str:
        return f"Secret({_MASK!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self.reveal_bytes(), other.reveal_bytes())

    def __hash__(self) -> int:
        return hash(Secret)

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("Secret values are not picklable")


def as_secret(value: str | bytes | Secret) -> Secret:
    """`value` wrapped in a `Secret` (unchanged if it already is one)."""
    return value if isinstance(value, Secret) else Secret(value)
