"""Delegation tokens (KIP-48): create, renew, expire and describe them.

A token is a shared secret (its HMAC) the broker hands to an authenticated principal, who then
gives it to a job that logs in with SCRAM as the token id, the HMAC in base64 as password and
the `tokenauth=true` extension (`DelegationToken.sasl_options()`). Only a principal that
authenticated with SASL (not with a token) may create one; the broker forwards these requests
to the controller, so any broker takes them. Principals are Kafka's `Type:name` strings
(`"User:alice"`). The HMAC never appears in a repr.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from krafka.protocol.messages import (
    ApiKey,
    CreateDelegationTokenRequest,
    CreateDelegationTokenResponse,
    DescribeDelegationTokenRequest,
    DescribeDelegationTokenResponse,
    ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse,
    RenewDelegationTokenRequest,
    RenewDelegationTokenResponse,
)
from krafka.protocol.messages.create_delegation_token_request import CreatableRenewers
from krafka.protocol.messages.describe_delegation_token_request import (
    DescribeDelegationTokenOwner,
)
from krafka.sansio.actions import Versioned
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import NOTHING_MOVES, Done, ItemResult, for_code
from krafka.sansio.admin.routing import Target
from krafka.sansio.secret import Secret

#: The one item of a delegation-token call.
TOKEN: Final = "delegation token"
#: CreateDelegationToken names an owner other than the requester from this version on.
_OWNER_SINCE: Final = 3
#: What the broker reads as "use the server's default" for lifetimes and periods.
SERVER_DEFAULT: Final = -1


def split_principal(principal: str) -> tuple[str, str]:
    """`"User:alice"` -> `("User", "alice")`, as Kafka's `KafkaPrincipal.fromString`."""
    kind, sep, name = str(principal).partition(":")
    if not sep or not kind or not name:
        raise ValueError(f"a principal is 'Type:name' (e.g. 'User:alice'), not {principal!r}")
    return kind, name


def _principal(kind: str | None, name: str | None) -> str:
    return f"{kind}:{name}"


def period_ms(seconds: float | None) -> int:
    """A period in seconds as the broker takes it (None: the server's default)."""
    if seconds is None:
        return SERVER_DEFAULT
    if seconds < 0:
        raise ValueError(f"a token period cannot be negative, got {seconds}")
    return int(seconds * 1000)


@dataclass(frozen=True, slots=True)
class DelegationToken:
    """A token and what the broker knows of it (timestamps in ms since the epoch)."""

    token_id: str
    hmac: bytes = field(repr=False)
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    expiry_timestamp: int
    max_timestamp: int

    @property
    def password(self) -> Secret:
        """The SCRAM password of the token: its HMAC in base64."""
        return Secret(base64.b64encode(self.hmac).decode())

    def sasl_options(self, mechanism: str = "SCRAM-SHA-256") -> dict[str, Any]:
        """The client keywords that log in with this token: `Producer(**token.sasl_options(),
        bootstrap_servers=..., ...)` (SASL_PLAINTEXT or, with `ssl_context`, SASL_SSL)."""
        if not mechanism.upper().startswith("SCRAM-"):
            raise ValueError(f"delegation tokens log in with SCRAM, not {mechanism}")
        return {
            "sasl_mechanism": mechanism.upper(),
            "sasl_username": self.token_id,
            "sasl_password": self.password,
            "sasl_scram_token_auth": True,
        }


def _hmac_of(token: bytes | DelegationToken) -> bytes:
    if isinstance(token, DelegationToken):
        return token.hmac
    if not isinstance(token, bytes | bytearray | memoryview) or not token:
        raise TypeError("pass a token's HMAC (bytes) or the DelegationToken")
    return bytes(token)


def _error(code: int, what: str, message: str | None = None) -> ItemResult | None:
    return for_code(code, what, message, moved=NOTHING_MOVES, retry=False)


class CreateDelegationToken(Handler[str]):
    """CreateDelegationToken for the requester, or (v3+) for another `owner`."""

    what = "create delegation token"

    def __init__(
        self,
        renewers: Iterable[str] = (),
        max_lifetime: float | None = None,
        owner: str | None = None,
    ) -> None:
        if isinstance(renewers, str):
            raise TypeError("renewers: pass a list of principals, not one string")
        self.renewers = [split_principal(r) for r in renewers]
        self.max_lifetime_ms = period_ms(max_lifetime)
        self.owner = split_principal(owner) if owner is not None else None

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        renewers = [CreatableRenewers(principal_type=t, principal_name=n) for t, n in self.renewers]
        owner = self.owner

        def build(version: int) -> CreateDelegationTokenRequest:
            request = CreateDelegationTokenRequest(
                renewers=renewers, max_lifetime_ms=self.max_lifetime_ms
            )
            if version >= _OWNER_SINCE:  # null: the requester owns the token
                request.owner_principal_type = owner[0] if owner else None
                request.owner_principal_name = owner[1] if owner else None
            return request

        versioned = Versioned(ApiKey.CREATE_DELEGATION_TOKEN, build)
        return [Call(versioned, tuple(keys), min_version=_OWNER_SINCE if owner else None)]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, CreateDelegationTokenResponse)
        failure = _error(int(response.error_code), self.what)
        if failure is not None:
            return dict.fromkeys(call.keys, failure)
        owner = _principal(response.principal_type, response.principal_name)
        requester = owner
        if response.token_requester_principal_name:
            requester = _principal(
                response.token_requester_principal_type, response.token_requester_principal_name
            )
        token = DelegationToken(
            token_id=str(response.token_id),
            hmac=bytes(response.hmac),
            owner=owner,
            requester=requester,
            renewers=tuple(_principal(t, n) for t, n in self.renewers),
            issue_timestamp=int(response.issue_timestamp_ms),
            expiry_timestamp=int(response.expiry_timestamp_ms),
            max_timestamp=int(response.max_timestamp_ms),
        )
        return dict.fromkeys(call.keys, Done(token))


class RenewDelegationToken(Handler[str]):
    """RenewDelegationToken: its value is the token's new expiry timestamp."""

    what = "renew delegation token"

    def __init__(self, token: bytes | DelegationToken, renew_period: float | None) -> None:
        self.hmac = _hmac_of(token)
        self.renew_period_ms = period_ms(renew_period)

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        request = RenewDelegationTokenRequest(hmac=self.hmac, renew_period_ms=self.renew_period_ms)
        return [Call(request, tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, RenewDelegationTokenResponse)
        outcome = _error(int(response.error_code), self.what) or Done(
            int(response.expiry_timestamp_ms)
        )
        return dict.fromkeys(call.keys, outcome)


class ExpireDelegationToken(Handler[str]):
    """ExpireDelegationToken: expire the token after a period (None: now); its value is the
    token's new expiry timestamp."""

    what = "expire delegation token"

    def __init__(self, token: bytes | DelegationToken, expiry_time_period: float | None) -> None:
        self.hmac = _hmac_of(token)
        self.expiry_time_period_ms = period_ms(expiry_time_period)

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        request = ExpireDelegationTokenRequest(
            hmac=self.hmac, expiry_time_period_ms=self.expiry_time_period_ms
        )
        return [Call(request, tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, ExpireDelegationTokenResponse)
        outcome = _error(int(response.error_code), self.what) or Done(
            int(response.expiry_timestamp_ms)
        )
        return dict.fromkeys(call.keys, outcome)


class DescribeDelegationTokens(Handler[str]):
    """DescribeDelegationToken: the tokens of `owners` (None: every token the caller may
    describe)."""

    what = "describe delegation tokens"

    def __init__(self, owners: Iterable[str] | None = None) -> None:
        if isinstance(owners, str):
            raise TypeError("owners: pass a list of principals, not one string")
        self.owners = None if owners is None else [split_principal(o) for o in owners]

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        owners = None
        if self.owners is not None:
            owners = [
                DescribeDelegationTokenOwner(principal_type=t, principal_name=n)
                for t, n in self.owners
            ]
        return [Call(DescribeDelegationTokenRequest(owners=owners), tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, DescribeDelegationTokenResponse)
        failure = _error(int(response.error_code), self.what)
        if failure is not None:
            return dict.fromkeys(call.keys, failure)
        tokens = [_described(t) for t in response.tokens]
        return dict.fromkeys(call.keys, Done(tokens))


def _described(token: Any) -> DelegationToken:
    owner = _principal(token.principal_type, token.principal_name)
    requester = owner
    if token.token_requester_principal_name:
        requester = _principal(
            token.token_requester_principal_type, token.token_requester_principal_name
        )
    return DelegationToken(
        token_id=str(token.token_id),
        hmac=bytes(token.hmac),
        owner=owner,
        requester=requester,
        renewers=tuple(_principal(r.principal_type, r.principal_name) for r in token.renewers),
        issue_timestamp=int(token.issue_timestamp),
        expiry_timestamp=int(token.expiry_timestamp),
        max_timestamp=int(token.max_timestamp),
    )


__all__ = [
    "TOKEN",
    "CreateDelegationToken",
    "DelegationToken",
    "DescribeDelegationTokens",
    "ExpireDelegationToken",
    "RenewDelegationToken",
    "split_principal",
]
