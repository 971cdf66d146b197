"""AWS_MSK_IAM: krafka's client message is byte for byte the one Amazon's Java library
`aws-msk-iam-auth` sends (same host, credentials and signing time), its signature checks out
against an independent SigV4 implementation, and the broker's answer is read strictly."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from krafka.errors import AuthenticationError
from krafka.sansio.sasl.msk_iam import AwsCredentials, MskIamMechanism, signed_payload
from krafka.testing.msk_iam import java_msk_iam_payload
from tests._sigv4 import verify

HOST = "b-1.orders.x1y2z3.c2.kafka.eu-west-1.amazonaws.com"
ACCESS, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
AGENT = "krafka-test/1"


@pytest.mark.parametrize("token", [None, "FwoGZXIvYXdzEBYaD+token/with=chars"])
def test_the_payload_is_byte_for_byte_amazons(token: str | None) -> None:
    java = java_msk_iam_payload(HOST, ACCESS, SECRET, user_agent=AGENT, session_token=token)
    fields = json.loads(java)
    signed_at = datetime.strptime(fields["x-amz-date"], "%Y%m%dT%H%M%SZ")
    mine = signed_payload(
        HOST,
        "eu-west-1",
        AwsCredentials(ACCESS, SECRET, token),
        signed_at=signed_at.replace(tzinfo=timezone.utc),
        user_agent=AGENT,
        expires=int(fields["x-amz-expires"]),  # Java's 900 s can round to 899
    )
    assert mine == java
    assert ("x-amz-security-token" in fields) is (token is not None)


def test_the_signature_verifies_independently() -> None:
    signed_at = datetime(2024, 5, 1, 12, 30, 5, tzinfo=timezone.utc)
    payload = signed_payload(
        HOST,
        "eu-west-1",
        AwsCredentials(ACCESS, SECRET, "tok"),
        signed_at=signed_at,
        user_agent=AGENT,
    )
    fields = verify(payload, SECRET)
    assert fields["x-amz-date"] == "20240501T123005Z" and fields["x-amz-expires"] == "900"
    assert fields["x-amz-credential"] == f"{ACCESS}/20240501/eu-west-1/kafka-cluster/aws4_request"
    assert (fields["host"], fields["user-agent"], fields["x-amz-security-token"]) == (
        HOST,
        AGENT,
        "tok",
    )
    with pytest.raises(AssertionError):
        verify(payload, "another-secret")
    assert SECRET not in repr(AwsCredentials(ACCESS, SECRET, "tok"))


def test_the_mechanism_reads_the_brokers_answer() -> None:
    mechanism = MskIamMechanism(lambda: b'{"version":"2020_10_22"}')
    assert mechanism.name == "AWS_MSK_IAM"
    assert mechanism.initial_response() == b'{"version":"2020_10_22"}'
    assert mechanism.respond(b'{"version":"2020_10_22","request-id":"r-1"}') is None
    assert mechanism.complete and mechanism.request_id == "r-1"


@pytest.mark.parametrize(
    "answer",
    [b"", b"not json", b'{"version":"2019"}', b'{"version":"2020_10_22"}', b"[1]"],
)
def test_a_bad_answer_fails_authentication(answer: bytes) -> None:
    mechanism = MskIamMechanism(lambda: b"{}")
    mechanism.initial_response()
    with pytest.raises(AuthenticationError, match="AWS_MSK_IAM"):
        mechanism.respond(answer)
    assert not mechanism.complete
