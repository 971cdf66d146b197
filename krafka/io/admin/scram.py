"""Admin calls on users' SCRAM credentials: describe, upsert, delete."""

from __future__ import annotations

from collections.abc import Iterable

from krafka.io.admin.base import AdminBase, names_of
from krafka.sansio.admin.results import Results
from krafka.sansio.admin.routing import ToAnyBroker, ToBrokers
from krafka.sansio.admin.scram import (
    ALL_USERS,
    AlterUserScramCredentials,
    DescribeUserScramCredentials,
    ScramAlteration,
    ScramCredentialInfo,
)


class ScramAdmin(AdminBase):
    async def describe_user_scram_credentials(
        self, users: Iterable[str] | None = None, *, timeout: float | None = None
    ) -> Results[str, tuple[ScramCredentialInfo, ...]]:
        """`{user: its credentials (mechanism, iterations)}` for `users`, or every user with
        SCRAM credentials (None); an unknown user gets `ResourceNotFoundError`."""
        handler = DescribeUserScramCredentials()
        if users is None:
            everyone = await self._run_one(handler, ToAnyBroker(), ALL_USERS, timeout)
            return Results(everyone)
        names = names_of(users, "describe_user_scram_credentials")
        return Results(await self._run(handler, ToAnyBroker(), names, timeout))

    async def alter_user_scram_credentials(
        self, alterations: Iterable[ScramAlteration], *, timeout: float | None = None
    ) -> Results[str, None]:
        """Apply `ScramUpsertion`s (the salted password is computed here; the password never
        leaves the process) and `ScramDeletion`s: `{user: None or error}`. A KRaft controller
        takes one alteration per user per request: two for one user (even of two mechanisms)
        fail that user with `DuplicateResourceError`, as they do from Java's AdminClient."""
        wanted = list(alterations)
        users = list(dict.fromkeys(a.user for a in wanted))
        handler = AlterUserScramCredentials(wanted)
        routing: ToBrokers[str] = ToBrokers(controller=True)
        return Results(await self._run(handler, routing, users, timeout))
