"""atheris harness: hostile broker bytes into `krafka.sansio.connection.BrokerConnection`.

The connection has negotiated ApiVersions and has requests of several APIs in flight; the
fuzzed bytes are fed as the broker's answer, in fuzzer-chosen chunks. The invariant: the
connection either decodes responses or closes with a `KrafkaError` — `receive_data` itself
never raises, and never buffers more than the frame-size cap. Short run in the suite:
`tests/sansio/test_connection.py::test_hostile_bytes_never_escape_as_other_exceptions`.

    python fuzz/fuzz_connection.py -max_total_time=60
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from krafka.errors import KrafkaError
    from krafka.protocol.messages import FetchRequest, MetadataRequest, ProduceRequest
    from krafka.sansio.connection import BrokerConnection, ConnectionConfig
    from krafka.sansio.events import ConnectionClosed
    from krafka.testing.scripted import negotiate

_MAX_FRAME = 1 << 20


def _connection() -> BrokerConnection:
    conn = BrokerConnection(ConnectionConfig(max_frame_size=_MAX_FRAME), now=0.0)
    negotiate(conn)
    conn.send_request(MetadataRequest(topics=[]), 0.0)
    conn.send_request(ProduceRequest(acks=1, timeout_ms=1, topic_data=[]), 0.0)
    conn.send_request(FetchRequest(max_wait_ms=1, min_bytes=1, topics=[]), 0.0)
    conn.data_to_send()
    return conn


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    conn = _connection()
    while fdp.remaining_bytes() and not conn.closed:
        chunk = fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 4096))
        for event in conn.receive_data(chunk, 0.0):
            if isinstance(event, ConnectionClosed):
                assert isinstance(event.error, KrafkaError), event.error
        assert conn._frames.buffered <= _MAX_FRAME + 4 + 4096


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
