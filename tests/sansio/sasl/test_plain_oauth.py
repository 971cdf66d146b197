from __future__ import annotations

import pytest

from krafka.errors import AuthenticationError
from krafka.sansio.sasl import OAuthBearerMechanism, OAuthBearerToken, PlainMechanism


def test_plain_message_and_completion() -> None:
    mech = PlainMechanism("alice", "pw")
    assert mech.initial_response() == b"\0alice\0pw"
    assert mech.respond(b"") is None
    assert mech.complete


def test_plain_rejects_a_challenge() -> None:
    mech = PlainMechanism("alice", "pw")
    mech.initial_response()
    with pytest.raises(AuthenticationError):
        mech.respond(b"challenge")


def test_oauthbearer_calls_provider_per_exchange() -> None:
    calls: list[int] = []

    def provider() -> OAuthBearerToken:
        calls.append(1)
        return OAuthBearerToken("tok-" + str(len(calls)), extensions={"traceId": "x1"})

    first = OAuthBearerMechanism(provider)
    assert first.initial_response() == b"n,,\x01auth=Bearer tok-1\x01traceId=x1\x01\x01"
    assert first.respond(b"") is None and first.complete
    assert OAuthBearerMechanism(provider).initial_response().startswith(b"n,,\x01auth=Bearer tok-2")


def test_oauthbearer_error_challenge_is_answered_then_fails() -> None:
    mech = OAuthBearerMechanism(lambda: OAuthBearerToken("t"))
    mech.initial_response()
    assert mech.respond(b'{"status":"invalid_token"}') == b"\x01"
    assert not mech.complete
    with pytest.raises(AuthenticationError):
        mech.respond(b"")


def test_token_repr_is_masked() -> None:
    assert "supersecret" not in repr(OAuthBearerToken("supersecret"))
