"""SCRAM credentials of users (KIP-554): describe them, and add or remove them.

The broker never sees a password: an upsertion carries the salt, the iteration count and the
salted password (RFC 5802's Hi(password, salt, i)), computed here with the same function the
SCRAM client authenticates with. Nothing secret appears in a repr.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Final

from krafka.protocol.messages import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
from krafka.protocol.messages.alter_user_scram_credentials_request import (
    ScramCredentialDeletion as WireDeletion,
)
from krafka.protocol.messages.alter_user_scram_credentials_request import (
    ScramCredentialUpsertion as WireUpsertion,
)
from krafka.protocol.messages.describe_user_scram_credentials_request import UserName
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import CONTROLLER_MOVED, NOTHING_MOVES, Done, ItemResult, for_code
from krafka.sansio.admin.routing import Target
from krafka.sansio.sasl.scram import ScramHash, salted_password
from krafka.sansio.secret import Secret, as_secret

#: Kafka's bounds on a SCRAM credential's iteration count.
MIN_ITERATIONS: Final = 4096
MAX_ITERATIONS: Final = 16384
_SALT_BYTES: Final = 32


class ScramMechanism(IntEnum):
    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def hash(self) -> ScramHash:
        if self is ScramMechanism.SCRAM_SHA_256:
            return ScramHash.SHA256
        if self is ScramMechanism.SCRAM_SHA_512:
            return ScramHash.SHA512
        raise ValueError("UNKNOWN is not a SCRAM mechanism")

    @classmethod
    def parse(cls, value: ScramMechanism | str | int) -> ScramMechanism:
        """A member, its code, or its name (`"SCRAM-SHA-256"` / `"scram_sha_512"`)."""
        if isinstance(value, str):
            return cls[value.strip().upper().replace("-", "_")]
        return cls(int(value))


@dataclass(frozen=True, slots=True)
class ScramCredentialInfo:
    mechanism: ScramMechanism
    iterations: int


@dataclass(frozen=True, slots=True, init=False)
class ScramUpsertion:
    """Create or replace `user`'s credential for `mechanism`. `salt` defaults to 32 random
    bytes; `iterations` must be within Kafka's 4096..16384."""

    user: str
    mechanism: ScramMechanism
    password: Secret
    iterations: int
    salt: bytes = field(repr=False)

    def __init__(
        self,
        user: str,
        mechanism: ScramMechanism | str | int,
        password: str | bytes | Secret,
        iterations: int = MIN_ITERATIONS,
        salt: bytes | None = None,
    ) -> None:
        if not user:
            raise ValueError("a SCRAM credential needs a user name")
        parsed = ScramMechanism.parse(mechanism)
        if parsed is ScramMechanism.UNKNOWN:
            raise ValueError("a SCRAM credential needs SCRAM-SHA-256 or SCRAM-SHA-512")
        if not MIN_ITERATIONS <= int(iterations) <= MAX_ITERATIONS:
            raise ValueError(
                f"SCRAM iterations must be within {MIN_ITERATIONS}..{MAX_ITERATIONS}, "
                f"got {iterations}"
            )
        if salt is not None and not salt:
            raise ValueError("a SCRAM salt cannot be empty")
        object.__setattr__(self, "user", user)
        object.__setattr__(self, "mechanism", parsed)
        object.__setattr__(self, "password", as_secret(password))
        object.__setattr__(self, "iterations", int(iterations))
        object.__setattr__(self, "salt", salt or secrets.token_bytes(_SALT_BYTES))

    def salted_password(self) -> bytes:
        return salted_password(self.mechanism.hash, self.password, self.salt, self.iterations)


@dataclass(frozen=True, slots=True)
class ScramDeletion:
    """Remove `user`'s credential for `mechanism`."""

    user: str
    mechanism: ScramMechanism

    def __post_init__(self) -> None:
        object.__setattr__(self, "mechanism", ScramMechanism.parse(self.mechanism))


ScramAlteration = ScramUpsertion | ScramDeletion

#: The item of a describe call that asks for every user.
ALL_USERS: Final = "*"


class DescribeUserScramCredentials(Handler[str]):
    """Users' credential infos (mechanism, iterations); `ALL_USERS` asks for everyone."""

    what = "describe SCRAM credentials"

    def describe(self, key: str) -> str:
        return "every user" if key == ALL_USERS else f"user {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        users = None if ALL_USERS in keys else [UserName(name=k) for k in keys]
        return [Call(DescribeUserScramCredentialsRequest(users=users), tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, DescribeUserScramCredentialsResponse)
        outcome = for_code(
            int(response.error_code),
            "describe SCRAM credentials",
            response.error_message,
            moved=NOTHING_MOVES,
        )
        if outcome is not None:
            return dict.fromkeys(call.keys, outcome)
        users: dict[str, ItemResult] = {}
        for result in response.results:
            user = str(result.user)
            what = f"describe SCRAM credentials of user {user!r}"
            code = int(result.error_code)
            users[user] = for_code(code, what, result.error_message, moved=NOTHING_MOVES) or Done(
                tuple(
                    ScramCredentialInfo(ScramMechanism.parse(i.mechanism), int(i.iterations))
                    for i in result.credential_infos
                )
            )
        if ALL_USERS in call.keys:
            return {ALL_USERS: Done({user: _settled(r) for user, r in users.items()})}
        return users


def _settled(result: ItemResult) -> Any:
    """A user's value or error, inside the answer about every user."""
    if isinstance(result, Done):
        return result.value
    return getattr(result, "error", None)


class AlterUserScramCredentials(Handler[str]):
    """Upsert and delete credentials, all in one request to the controller; the item is the
    user (all alterations of one user succeed or fail together)."""

    what = "alter SCRAM credentials"

    def __init__(self, alterations: Sequence[ScramAlteration]) -> None:
        self.alterations = list(alterations)

    def describe(self, key: str) -> str:
        return f"user {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        wanted = set(keys)
        deletions = [
            WireDeletion(name=a.user, mechanism=int(a.mechanism))
            for a in self.alterations
            if isinstance(a, ScramDeletion) and a.user in wanted
        ]
        upsertions = [
            WireUpsertion(
                name=a.user,
                mechanism=int(a.mechanism),
                iterations=a.iterations,
                salt=a.salt,
                salted_password=a.salted_password(),
            )
            for a in self.alterations
            if isinstance(a, ScramUpsertion) and a.user in wanted
        ]
        request = AlterUserScramCredentialsRequest(deletions=deletions, upsertions=upsertions)
        return [Call(request, tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, AlterUserScramCredentialsResponse)
        out: dict[str, ItemResult] = {}
        for result in response.results:
            user = str(result.user)
            what = f"alter SCRAM credentials of user {user!r}"
            code = int(result.error_code)
            out[user] = for_code(
                code, what, result.error_message, moved=CONTROLLER_MOVED, retry=False
            ) or Done(None)
        return out


__all__ = [
    "ALL_USERS",
    "MAX_ITERATIONS",
    "MIN_ITERATIONS",
    "AlterUserScramCredentials",
    "DescribeUserScramCredentials",
    "ScramAlteration",
    "ScramCredentialInfo",
    "ScramDeletion",
    "ScramMechanism",
    "ScramUpsertion",
]
