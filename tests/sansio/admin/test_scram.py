"""SCRAM credential handlers: the salted password computed here is what an independent SCRAM
server (`scramp`) derives, and a broker storing it lets our own SCRAM client log in."""

from __future__ import annotations

import hashlib
import hmac

import pytest
import scramp
from _admin_scripted import answer_metadata, metadata, start, take

from krafka.errors import ResourceNotFoundError, UnacceptableCredentialError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
from krafka.sansio.admin.routing import ToAnyBroker, ToBrokers
from krafka.sansio.admin.scram import (
    ALL_USERS,
    AlterUserScramCredentials,
    DescribeUserScramCredentials,
    ScramCredentialInfo,
    ScramDeletion,
    ScramMechanism,
    ScramUpsertion,
)
from krafka.sansio.sasl.scram import ScramMechanism as ScramClient

NAMES = {
    ScramMechanism.SCRAM_SHA_256: "SCRAM-SHA-256",
    ScramMechanism.SCRAM_SHA_512: "SCRAM-SHA-512",
}


@pytest.mark.parametrize("mechanism", list(NAMES))
def test_salted_password_matches_an_independent_scram_server(mechanism: ScramMechanism) -> None:
    upsert = ScramUpsertion(
        "alice", mechanism, "pässword", iterations=8192, salt=b"0123456789abcdef"
    )
    _salt, stored_key, server_key, iterations = scramp.ScramMechanism(
        NAMES[mechanism]
    ).make_auth_info("pässword", iteration_count=8192, salt=b"0123456789abcdef")
    digest = mechanism.hash.digest
    salted = upsert.salted_password()
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    assert hashlib.new(digest, client_key).digest() == stored_key
    assert hmac.new(salted, b"Server Key", digest).digest() == server_key
    assert iterations == 8192


def test_a_stored_credential_lets_our_client_log_in() -> None:
    upsert = ScramUpsertion("carol", "SCRAM-SHA-512", "s3cret", iterations=4096)
    salted = upsert.salted_password()
    client_key = hmac.new(salted, b"Client Key", "sha512").digest()
    stored = hashlib.sha512(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", "sha512").digest()
    server = scramp.ScramMechanism("SCRAM-SHA-512").make_server(
        lambda _user: (upsert.salt, stored, server_key, upsert.iterations)
    )
    client = ScramClient("carol", "s3cret", ScramMechanism.SCRAM_SHA_512.hash)
    server.set_client_first(client.initial_response().decode())
    final = client.respond(server.get_server_first().encode())
    assert final is not None
    server.set_client_final(final.decode())
    assert client.respond(server.get_server_final().encode()) is None and client.complete


def test_upsertions_are_validated_and_keep_the_password_secret() -> None:
    with pytest.raises(ValueError, match=r"4096\.\.16384"):
        ScramUpsertion("u", ScramMechanism.SCRAM_SHA_256, "pw", iterations=4095)
    with pytest.raises(ValueError, match=r"4096\.\.16384"):
        ScramUpsertion("u", ScramMechanism.SCRAM_SHA_256, "pw", iterations=16385)
    with pytest.raises(ValueError, match="SCRAM-SHA"):
        ScramUpsertion("u", ScramMechanism.UNKNOWN, "pw")
    with pytest.raises(ValueError, match="user"):
        ScramUpsertion("", ScramMechanism.SCRAM_SHA_256, "pw")
    upsert = ScramUpsertion("u", "scram-sha-256", "hunter2")
    assert "hunter2" not in repr(upsert) and len(upsert.salt) == 32
    assert ScramUpsertion("u", 1, "pw").salt != upsert.salt


def test_alter_sends_salted_credentials_to_the_controller_per_user() -> None:
    upsert = ScramUpsertion("alice", ScramMechanism.SCRAM_SHA_256, "pw", salt=b"salt")
    delete = ScramDeletion("bob", ScramMechanism.SCRAM_SHA_512)
    _, talk, op = start(
        AlterUserScramCredentials([upsert, delete]), ToBrokers(controller=True), ["alice", "bob"]
    )
    answer_metadata(talk, metadata(controller=2))
    sent, request = take(talk, AlterUserScramCredentialsRequest)
    assert sent.target.node_id == 2
    (u,) = request.upsertions
    assert (u.name, u.mechanism, u.iterations, u.salt) == ("alice", 1, 4096, b"salt")
    assert u.salted_password == upsert.salted_password() and b"pw" not in request.encode(0)
    assert [(d.name, d.mechanism) for d in request.deletions] == [("bob", 2)]
    R = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
    talk.reply(
        sent,
        AlterUserScramCredentialsResponse(
            results=[
                R(user="alice"),
                R(
                    user="bob",
                    error_code=ErrorCode.RESOURCE_NOT_FOUND,
                    error_message="no such credential",
                ),
            ]
        ),
    )
    results = talk.outcome(op)
    assert results["alice"] is None and isinstance(results["bob"], ResourceNotFoundError)


Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
Info = Result.CredentialInfo


def test_describe_every_user() -> None:
    _, talk, op = start(DescribeUserScramCredentials(), ToAnyBroker(), [ALL_USERS])
    sent, request = take(talk, DescribeUserScramCredentialsRequest)
    assert request.users is None
    talk.reply(
        sent,
        DescribeUserScramCredentialsResponse(
            results=[
                Result(
                    user="alice",
                    credential_infos=[
                        Info(mechanism=1, iterations=4096),
                        Info(mechanism=2, iterations=8192),
                    ],
                ),
                Result(user="bob", credential_infos=[Info(mechanism=2, iterations=4096)]),
            ]
        ),
    )
    users = talk.outcome(op)[ALL_USERS]
    assert users == {
        "alice": (
            ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
            ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
        ),
        "bob": (ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),),
    }


def test_describe_some_users() -> None:
    _, talk, op = start(DescribeUserScramCredentials(), ToAnyBroker(), ["alice", "ghost"])
    sent, request = take(talk, DescribeUserScramCredentialsRequest)
    assert [u.name for u in request.users] == ["alice", "ghost"]
    talk.reply(
        sent,
        DescribeUserScramCredentialsResponse(
            results=[
                Result(user="alice", credential_infos=[Info(mechanism=1, iterations=4096)]),
                Result(user="ghost", error_code=ErrorCode.RESOURCE_NOT_FOUND),
            ]
        ),
    )
    results = talk.outcome(op)
    assert results["alice"] == (ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),)
    assert isinstance(results["ghost"], ResourceNotFoundError)


def test_describe_top_level_error_fails_every_user() -> None:
    _, talk, op = start(DescribeUserScramCredentials(), ToAnyBroker(), ["a", "b"])
    sent, _ = take(talk, DescribeUserScramCredentialsRequest)
    talk.reply(
        sent, DescribeUserScramCredentialsResponse(error_code=ErrorCode.UNACCEPTABLE_CREDENTIAL)
    )
    results = talk.outcome(op)
    assert all(isinstance(results[u], UnacceptableCredentialError) for u in "ab")
