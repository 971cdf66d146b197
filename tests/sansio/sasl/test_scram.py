"""SCRAM client against RFC test vectors and the independent `scramp` server."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
import scramp

from krafka.errors import AuthenticationError
from krafka.sansio.sasl import ScramHash, ScramMechanism
from krafka.sansio.sasl.scram import TOKEN_AUTH


def test_rfc7677_sha256_vector() -> None:
    mech = ScramMechanism("user", "pencil", ScramHash.SHA256, nonce="rOprNGfwEbeRWgbNEkqO")
    assert mech.initial_response() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    server_first = (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert mech.respond(server_first) == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert mech.respond(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None
    assert mech.complete


def test_rfc5802_sha1_vector() -> None:
    mech = ScramMechanism("user", "pencil", ScramHash.SHA1, nonce="fyko+d2lbbFgONRv9qkxdawL")
    assert mech.initial_response() == b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"
    server_first = b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
    assert mech.respond(server_first) == (
        b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
    )
    assert mech.respond(b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ=") is None
    assert mech.complete


def _scramp_server(name: str, password: str, iterations: int = 4096) -> scramp.ScramServer:
    mechanism = scramp.ScramMechanism(name)
    auth = mechanism.make_auth_info(password, iteration_count=iterations)
    return mechanism.make_server(lambda _username: auth)


@pytest.mark.parametrize("hash_", [ScramHash.SHA256, ScramHash.SHA512])
def test_against_scramp_server(hash_: ScramHash) -> None:
    server = _scramp_server(hash_.mechanism, "s3cret pass")
    client = ScramMechanism("alice,=x", "s3cret pass", hash_)
    server.set_client_first(client.initial_response().decode())
    final = client.respond(server.get_server_first().encode())
    assert final is not None
    server.set_client_final(final.decode())
    assert client.respond(server.get_server_final().encode()) is None
    assert client.complete


def test_wrong_password_is_rejected_by_scramp() -> None:
    server = _scramp_server("SCRAM-SHA-256", "right")
    client = ScramMechanism("bob", "wrong")
    server.set_client_first(client.initial_response().decode())
    final = client.respond(server.get_server_first().encode())
    assert final is not None
    with pytest.raises(scramp.ScramException):
        server.set_client_final(final.decode())


def _run_to_server_final(iterations: int = 4096) -> tuple[ScramMechanism, bytes]:
    server = _scramp_server("SCRAM-SHA-256", "pw", iterations)
    client = ScramMechanism("carol", "pw")
    server.set_client_first(client.initial_response().decode())
    final = client.respond(server.get_server_first().encode())
    assert final is not None
    server.set_client_final(final.decode())
    return client, server.get_server_final().encode()


def test_tampered_server_signature_rejected() -> None:
    client, server_final = _run_to_server_final()
    signature = bytearray(base64.b64decode(server_final[2:]))
    signature[0] ^= 1
    with pytest.raises(AuthenticationError, match="signature verification failed"):
        client.respond(b"v=" + base64.b64encode(bytes(signature)))
    assert not client.complete


def test_server_error_is_reported() -> None:
    client, _ = _run_to_server_final()
    with pytest.raises(AuthenticationError, match="invalid-proof"):
        client.respond(b"e=invalid-proof")


@pytest.mark.parametrize("iterations", [1, 4095, 100_001, 10**12])
def test_iteration_count_bounds(iterations: int) -> None:
    client = ScramMechanism("dave", "pw", nonce="abc")
    client.initial_response()
    server_first = f"r=abcdef,s=QSXCR+Q6sek8bf92,i={iterations}".encode()
    with pytest.raises(AuthenticationError, match="iteration count"):
        client.respond(server_first)


@pytest.mark.parametrize(
    "server_first",
    [b"r=other,s=QSXC,i=4096", b"r=abc,s=QSXC,i=4096", b"garbage", b"r=abcd,i=4096", b"\xff\xfe"],
)
def test_malformed_server_first_rejected(server_first: bytes) -> None:
    client = ScramMechanism("erin", "hunter2", nonce="abc")
    client.initial_response()
    with pytest.raises(AuthenticationError) as info:
        client.respond(server_first)
    assert "hunter2" not in str(info.value)


def test_delegation_token_login_sends_tokenauth_as_java_does() -> None:
    """Java's ScramSaslClient puts extensions after the nonce of the client-first message, and
    the proof covers them (they are part of client-first-bare); checked here by hand."""
    client = ScramMechanism("tok-id", "aG1hYw==", nonce="abc", extensions=TOKEN_AUTH)
    assert client.initial_response() == b"n,,n=tok-id,r=abc,tokenauth=true"
    salt, iterations = b"salty", 4096
    server_first = f"r=abcdef,s={base64.b64encode(salt).decode()},i={iterations}"
    final = client.respond(server_first.encode())
    assert final is not None
    without_proof, proof = final.decode().rsplit(",p=", 1)
    auth_message = f"n=tok-id,r=abc,tokenauth=true,{server_first},{without_proof}".encode()
    salted = hashlib.pbkdf2_hmac("sha256", b"aG1hYw==", salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    signature = hmac.new(hashlib.sha256(client_key).digest(), auth_message, "sha256").digest()
    assert base64.b64decode(proof) == bytes(
        a ^ b for a, b in zip(client_key, signature, strict=True)
    )


@pytest.mark.parametrize(
    "extensions", [{"a": "1"}, {"token auth": "x"}, {"k": "v,w"}, {"kk": "a=b"}]
)
def test_malformed_extensions_are_refused(extensions: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="extension"):
        ScramMechanism("u", "p", extensions=extensions)
