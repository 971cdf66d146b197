"""Delegation-token handlers with a scripted broker: the requests as Kafka reads them, the
answers read into `DelegationToken`s, errors raised as their classes."""

from __future__ import annotations

import base64

import pytest
from _admin_scripted import start, take

from krafka.errors import (
    DelegationTokenExpiredError,
    DelegationTokenOwnerMismatchError,
    UnsupportedVersionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    CreateDelegationTokenRequest,
    CreateDelegationTokenResponse,
    DescribeDelegationTokenRequest,
    DescribeDelegationTokenResponse,
    ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse,
    RenewDelegationTokenRequest,
    RenewDelegationTokenResponse,
)
from krafka.sansio.admin.delegation_tokens import (
    TOKEN,
    CreateDelegationToken,
    DelegationToken,
    DescribeDelegationTokens,
    ExpireDelegationToken,
    RenewDelegationToken,
)
from krafka.sansio.admin.routing import ToAnyBroker

HMAC = b"\x01\x02secret-hmac"
Described = DescribeDelegationTokenResponse.DescribedDelegationToken
Renewer = Described.DescribedDelegationTokenRenewer


def _created(requester: bool = True) -> CreateDelegationTokenResponse:
    return CreateDelegationTokenResponse(
        principal_type="User",
        principal_name="svc",
        token_requester_principal_type="User" if requester else "",
        token_requester_principal_name="alice" if requester else "",
        issue_timestamp_ms=1000,
        expiry_timestamp_ms=2000,
        max_timestamp_ms=3000,
        token_id="tok-1",
        hmac=HMAC,
    )


def test_create_for_another_owner_needs_v3_and_reads_the_token() -> None:
    handler = CreateDelegationToken(["User:bob"], max_lifetime=60, owner="User:svc")
    _, talk, op = start(handler, ToAnyBroker(), [TOKEN])
    sent, request = take(talk, CreateDelegationTokenRequest)
    assert sent.min_version == 3
    assert (request.owner_principal_type, request.owner_principal_name) == ("User", "svc")
    assert [(r.principal_type, r.principal_name) for r in request.renewers] == [("User", "bob")]
    assert request.max_lifetime_ms == 60_000
    talk.reply(sent, _created())
    token = talk.outcome(op)[TOKEN]
    assert token == DelegationToken(
        "tok-1", HMAC, "User:svc", "User:alice", ("User:bob",), 1000, 2000, 3000
    )
    assert (
        "secret" not in repr(token) and token.password.reveal() == base64.b64encode(HMAC).decode()
    )
    assert token.sasl_options()["sasl_scram_token_auth"] is True
    with pytest.raises(ValueError, match="SCRAM"):
        token.sasl_options("PLAIN")


@pytest.mark.parametrize("version", [1, 2, 3])
def test_create_for_oneself_on_any_version(version: int) -> None:
    _, talk, op = start(CreateDelegationToken(), ToAnyBroker(), [TOKEN], versions={38: version})
    sent, request = take(talk, CreateDelegationTokenRequest)
    assert sent.min_version is None and request.max_lifetime_ms == -1
    if version >= 3:  # null owner: the requester
        assert request.owner_principal_name is None
    talk.reply(sent, _created(requester=version >= 3))
    token = talk.outcome(op)[TOKEN]
    assert token.requester == ("User:alice" if version >= 3 else token.owner)


def test_bad_principals_are_refused_before_sending() -> None:
    with pytest.raises(ValueError, match="Type:name"):
        CreateDelegationToken(["bob"])
    with pytest.raises(TypeError):
        CreateDelegationToken("User:bob")
    with pytest.raises(TypeError):
        RenewDelegationToken(b"", None)


def test_renew_and_expire_carry_the_hmac_and_periods() -> None:
    _, talk, op = start(RenewDelegationToken(HMAC, 1.5), ToAnyBroker(), [TOKEN])
    sent, request = take(talk, RenewDelegationTokenRequest)
    assert (request.hmac, request.renew_period_ms) == (HMAC, 1500)
    talk.reply(sent, RenewDelegationTokenResponse(expiry_timestamp_ms=5000))
    assert talk.outcome(op)[TOKEN] == 5000

    _, talk, op = start(ExpireDelegationToken(HMAC, None), ToAnyBroker(), [TOKEN])
    sent, request = take(talk, ExpireDelegationTokenRequest)
    assert (request.hmac, request.expiry_time_period_ms) == (HMAC, -1)
    talk.reply(sent, ExpireDelegationTokenResponse(error_code=ErrorCode.DELEGATION_TOKEN_EXPIRED))
    assert isinstance(talk.outcome(op)[TOKEN], DelegationTokenExpiredError)


def test_describe_reads_every_token() -> None:
    _, talk, op = start(DescribeDelegationTokens(["User:alice"]), ToAnyBroker(), [TOKEN])
    sent, request = take(talk, DescribeDelegationTokenRequest)
    assert [(o.principal_type, o.principal_name) for o in request.owners] == [("User", "alice")]
    described = Described(
        principal_type="User",
        principal_name="alice",
        token_requester_principal_type="User",
        token_requester_principal_name="alice",
        issue_timestamp=1,
        expiry_timestamp=2,
        max_timestamp=3,
        token_id="t",
        hmac=HMAC,
        renewers=[Renewer(principal_type="User", principal_name="bob")],
    )
    talk.reply(sent, DescribeDelegationTokenResponse(tokens=[described]))
    (token,) = talk.outcome(op)[TOKEN]
    assert (token.owner, token.renewers, token.hmac) == ("User:alice", ("User:bob",), HMAC)

    _, talk, op = start(DescribeDelegationTokens(), ToAnyBroker(), [TOKEN])
    sent, request = take(talk, DescribeDelegationTokenRequest)
    assert request.owners is None
    talk.reply(
        sent,
        DescribeDelegationTokenResponse(error_code=ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH),
    )
    assert isinstance(talk.outcome(op)[TOKEN], DelegationTokenOwnerMismatchError)


def test_an_owner_on_a_broker_without_v3_fails_as_unsupported() -> None:
    _, talk, op = start(
        CreateDelegationToken(owner="User:svc"), ToAnyBroker(), [TOKEN], versions={38: 2}
    )
    sent, _ = take(talk, CreateDelegationTokenRequest)
    talk.fail(sent, UnsupportedVersionError("CreateDelegationToken v3+ needed"))
    with pytest.raises(UnsupportedVersionError):
        talk.outcome(op)
