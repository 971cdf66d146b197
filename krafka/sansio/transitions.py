"""One DEBUG line per state transition of a sans-IO machine.

Every machine (connection, metadata, group member, share member, producer idempotence and
transactions, consumer engine) reports its transitions through `transition`, so they read
alike: `<machine>: OLD -> NEW (reason)`. The check comes first: at INFO and above a transition
costs one `isEnabledFor` call. States are enums; a reason is an error or a short phrase,
never a request's contents.
"""

from __future__ import annotations

import logging
from enum import Enum


def transition(
    log: logging.Logger,
    machine: str,
    old: Enum | str | None,
    new: Enum | str | None,
    reason: object = None,
) -> None:
    """Log `machine` going from `old` to `new` at DEBUG (nothing when they are equal)."""
    if old is new or not log.isEnabledFor(logging.DEBUG):
        return
    why = "" if reason is None else f" ({reason})"
    log.debug("%s: %s -> %s%s", machine, _name(old), _name(new), why)


def _name(state: Enum | str | None) -> str:
    if isinstance(state, Enum):
        return state.name
    return str(state)


__all__ = ["transition"]
