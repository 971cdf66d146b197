"""SASL over BrokerConnection: handshake, PLAIN, SCRAM against scramp's server, KIP-368."""

from __future__ import annotations

import pytest
import scramp

from krafka.errors import AuthenticationError
from krafka.protocol import ApiKey
from krafka.protocol.messages import (
    MetadataRequest,
    MetadataResponse,
    SaslAuthenticateResponse,
    SaslHandshakeResponse,
)
from krafka.sansio.connection import BrokerConnection, ConnectionConfig, ConnectionState
from krafka.sansio.events import Authenticated, ConnectionClosed, ConnectionReady, ResponseReceived
from krafka.sansio.sasl import PlainMechanism, ScramHash, ScramMechanism
from krafka.testing.scripted import api_versions, negotiate, response_bytes, sent_by


def _plain(config_extra: float = 0.9) -> ConnectionConfig:
    return ConnectionConfig(
        sasl=lambda: PlainMechanism("alice", "hunter2"), reauth_fraction=config_extra
    )


def _authenticate_plain(conn: BrokerConnection, now: float, lifetime_ms: int = 0) -> list[object]:
    (handshake,) = sent_by(conn)
    assert handshake.api_key == ApiKey.SASL_HANDSHAKE and handshake.version == 1
    assert handshake.body.mechanism == "PLAIN"
    reply = SaslHandshakeResponse(mechanisms=["PLAIN"])
    assert not conn.receive_data(response_bytes(handshake, reply), now)
    (auth,) = sent_by(conn)
    assert auth.api_key == ApiKey.SASL_AUTHENTICATE and auth.body.auth_bytes == b"\0alice\0hunter2"
    done = SaslAuthenticateResponse(session_lifetime_ms=lifetime_ms)
    return conn.receive_data(response_bytes(auth, done), now)


def test_plain_authentication_then_ready() -> None:
    conn = BrokerConnection(_plain(), now=0.0)
    queued = conn.send_request(MetadataRequest(topics=[]), 0.0)
    assert negotiate(conn) == []
    assert conn.state is ConnectionState.AUTHENTICATING
    events = _authenticate_plain(conn, 0.1)
    assert events[0] == Authenticated("PLAIN", 0, False)
    assert isinstance(events[1], ConnectionReady)
    assert [s.correlation_id for s in sent_by(conn)] == [queued]
    assert "hunter2" not in repr(conn.config)


def test_unsupported_mechanism_closes_with_authentication_error() -> None:
    conn = BrokerConnection(_plain(), now=0.0)
    negotiate(conn)
    (handshake,) = sent_by(conn)
    reply = SaslHandshakeResponse(error_code=33, mechanisms=["SCRAM-SHA-512"])
    (event,) = conn.receive_data(response_bytes(handshake, reply), 0.0)
    assert isinstance(event, ConnectionClosed) and isinstance(event.error, AuthenticationError)
    assert "SCRAM-SHA-512" in str(event.error)


def test_failed_authentication_message_has_no_secret() -> None:
    conn = BrokerConnection(_plain(), now=0.0)
    negotiate(conn)
    (handshake,) = sent_by(conn)
    conn.receive_data(response_bytes(handshake, SaslHandshakeResponse(mechanisms=["PLAIN"])), 0)
    (auth,) = sent_by(conn)
    reply = SaslAuthenticateResponse(error_code=58, error_message="bad credentials")
    (event,) = conn.receive_data(response_bytes(auth, reply), 0.0)
    assert isinstance(event, ConnectionClosed) and "bad credentials" in str(event.error)
    assert "hunter2" not in str(event.error)


def test_broker_without_sasl_handshake_v1_is_rejected() -> None:
    conn = BrokerConnection(_plain(), now=0.0)
    versions = {ApiKey.API_VERSIONS: (0, 4), ApiKey.SASL_HANDSHAKE: (0, 0)}
    (event,) = negotiate(conn, versions=versions)
    assert isinstance(event, ConnectionClosed) and "KIP-152" in str(event.error)


@pytest.mark.parametrize("hash_", [ScramHash.SHA256, ScramHash.SHA512])
def test_scram_against_scramp_server(hash_: ScramHash) -> None:
    server_mech = scramp.ScramMechanism(hash_.mechanism)
    auth_info = server_mech.make_auth_info("pw", iteration_count=4096)
    server = server_mech.make_server(lambda _user: auth_info)
    conn = BrokerConnection(
        ConnectionConfig(sasl=lambda: ScramMechanism("bob", "pw", hash_)), now=0.0
    )
    negotiate(conn)
    (handshake,) = sent_by(conn)
    reply = SaslHandshakeResponse(mechanisms=[hash_.mechanism])
    conn.receive_data(response_bytes(handshake, reply), 0.0)
    (first,) = sent_by(conn)
    server.set_client_first(first.body.auth_bytes.decode())
    server_first = SaslAuthenticateResponse(auth_bytes=server.get_server_first().encode())
    conn.receive_data(response_bytes(first, server_first), 0.0)
    (final,) = sent_by(conn)
    server.set_client_final(final.body.auth_bytes.decode())
    server_final = SaslAuthenticateResponse(auth_bytes=server.get_server_final().encode())
    events = conn.receive_data(response_bytes(final, server_final), 0.0)
    assert events[0] == Authenticated(hash_.mechanism, 0, False)
    assert conn.state is ConnectionState.READY


def test_reauthentication_before_session_lifetime_ends() -> None:
    conn = BrokerConnection(_plain(0.8), now=0.0)
    negotiate(conn)
    _authenticate_plain(conn, 0.0, lifetime_ms=10_000)
    assert conn.reauth_at == pytest.approx(8.0)
    cid = conn.send_request(MetadataRequest(topics=[]), 7.0)
    (in_flight,) = sent_by(conn)
    assert conn.next_deadline() == pytest.approx(8.0)
    assert conn.handle_timeout(8.0) == []
    assert conn.state is ConnectionState.REAUTH_PENDING
    later = conn.send_request(MetadataRequest(topics=[]), 8.1)
    assert sent_by(conn) == []  # nothing new while waiting for the in-flight request to drain
    (event,) = conn.receive_data(response_bytes(in_flight, MetadataResponse()), 8.2)
    assert isinstance(event, ResponseReceived) and event.correlation_id == cid
    assert conn.state is ConnectionState.REAUTHENTICATING
    events = _authenticate_plain(conn, 8.3, lifetime_ms=10_000)
    assert events == [Authenticated("PLAIN", 10_000, True)]
    assert conn.state is ConnectionState.READY
    assert conn.reauth_at == pytest.approx(8.2 + 8.0)
    assert [s.correlation_id for s in sent_by(conn)] == [later]


def test_scripted_versions_helper_covers_sasl() -> None:
    keys = {k.api_key for k in api_versions().api_keys}
    assert {ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE} <= keys
