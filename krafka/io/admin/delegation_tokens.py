"""Admin calls on delegation tokens (KIP-48): create, renew, expire, describe."""

from __future__ import annotations

from collections.abc import Iterable

from krafka.io.admin.base import AdminBase
from krafka.sansio.admin.delegation_tokens import (
    TOKEN,
    CreateDelegationToken,
    DelegationToken,
    DescribeDelegationTokens,
    ExpireDelegationToken,
    RenewDelegationToken,
)
from krafka.sansio.admin.routing import ToAnyBroker


class DelegationTokensAdmin(AdminBase):
    async def create_delegation_token(
        self,
        renewers: Iterable[str] = (),
        max_lifetime: float | None = None,
        *,
        owner: str | None = None,
        timeout: float | None = None,
    ) -> DelegationToken:
        """A new token for the authenticated principal (or for `owner`, a `Type:name`
        principal, which needs CreateTokens on that user); `renewers` may renew it too;
        `max_lifetime` in seconds (None: the broker's `delegation.token.max.lifetime.ms`).
        Only a client that authenticated with SASL, not with a token, may create one."""
        handler = CreateDelegationToken(renewers, max_lifetime, owner)
        token: DelegationToken = await self._run_one(handler, ToAnyBroker(), TOKEN, timeout)
        return token

    async def renew_delegation_token(
        self,
        hmac: bytes | DelegationToken,
        renew_period: float | None = None,
        *,
        timeout: float | None = None,
    ) -> int:
        """Push the token's expiry `renew_period` seconds ahead (None: the broker's
        `delegation.token.expiry.time.ms`), never past its max timestamp; returns the new
        expiry timestamp (ms). The owner and the renewers may renew."""
        handler = RenewDelegationToken(hmac, renew_period)
        expiry: int = await self._run_one(handler, ToAnyBroker(), TOKEN, timeout)
        return expiry

    async def expire_delegation_token(
        self,
        hmac: bytes | DelegationToken,
        expiry_time_period: float | None = None,
        *,
        timeout: float | None = None,
    ) -> int:
        """Expire the token `expiry_time_period` seconds from now (None: at once); returns the
        new expiry timestamp (ms). An expired token no longer logs in."""
        handler = ExpireDelegationToken(hmac, expiry_time_period)
        expiry: int = await self._run_one(handler, ToAnyBroker(), TOKEN, timeout)
        return expiry

    async def describe_delegation_tokens(
        self, owners: Iterable[str] | None = None, *, timeout: float | None = None
    ) -> list[DelegationToken]:
        """The tokens `owners` (`Type:name` principals) own or may renew, as Kafka matches them;
        None: every token the caller may describe (its own, those it renews, and any with
        DescribeTokens on their owner)."""
        handler = DescribeDelegationTokens(owners)
        tokens: list[DelegationToken] = await self._run_one(handler, ToAnyBroker(), TOKEN, timeout)
        return tokens
