"""The broker error-code table maps onto one exception class per code."""

from __future__ import annotations

import pytest

from krafka import errors
from krafka.protocol.error_codes import ErrorCode

ERROR_CODES = [c for c in ErrorCode if c is not ErrorCode.NONE]


def test_every_code_has_a_class() -> None:
    for row in ERROR_CODES:
        cls = errors.error_class(int(row))
        assert cls.code == int(row)  # type: ignore[attr-defined]
        err = errors.error_for_code(int(row))
        assert err.retriable == row.retriable, row.name
        assert isinstance(err, errors.KrafkaError)
        assert isinstance(err, errors.RetriableError) == row.retriable or int(row) == 2


def test_names_and_hierarchy() -> None:
    assert errors.error_class(6) is errors.NotLeaderOrFollowerError
    assert errors.NotLeaderOrFollowerError.code == 6
    assert errors.NotLeaderOrFollowerError.retriable
    assert errors.error_class(35) is errors.UnsupportedVersionError
    assert errors.error_class(2) is errors.CorruptRecordError
    assert errors.error_class(58) is errors.SaslAuthenticationError
    assert issubclass(errors.SaslAuthenticationError, errors.AuthenticationError)
    assert errors.error_class(90) is errors.ProducerFencedError
    assert issubclass(errors.TopicAuthorizationFailedError, errors.AuthorizationError)
    assert issubclass(errors.RequestTimedOutError, errors.KafkaTimeoutError)
    assert issubclass(errors.LocalProtocolError, errors.ProtocolError)
    assert issubclass(errors.RemoteProtocolError, errors.ProtocolError)
    assert not errors.ProducerFencedError.retriable


def test_messages_and_unknown_codes() -> None:
    e = errors.error_for_code(3, "no such topic t")
    assert str(e) == "no such topic t"
    assert "does not host" in str(errors.error_for_code(3))
    unknown = errors.error_for_code(9999)
    assert isinstance(unknown, errors.UnknownBrokerError) and unknown.code == 9999
    with pytest.raises(ValueError):
        errors.error_class(0)


def test_error_code_members_are_the_wire_ints() -> None:
    assert ErrorCode.NOT_COORDINATOR == 16 and ErrorCode(16) is ErrorCode.NOT_COORDINATOR
    assert ErrorCode.NOT_COORDINATOR.retriable and not ErrorCode.ILLEGAL_GENERATION.retriable
    assert errors.error_class(ErrorCode.ILLEGAL_GENERATION) is errors.IllegalGenerationError


def test_a_local_connection_failure_is_not_a_broker_code() -> None:
    local = errors.KafkaConnectionError("connection reset")
    assert local.retriable and not isinstance(local, errors.BrokerError)
    broker = errors.error_for_code(ErrorCode.NETWORK_EXCEPTION)
    assert isinstance(broker, errors.NetworkError) and isinstance(broker, errors.BrokerError)
    assert not isinstance(broker, errors.KafkaConnectionError)


def test_existing_signatures_kept() -> None:
    e = errors.CorruptRecordError("bad crc", offset=12)
    assert e.offset == 12 and "12" in str(e)
    assert issubclass(errors.UnsupportedCodecError, errors.KrafkaError)


def test_importing_errors_does_not_load_every_message() -> None:
    import subprocess
    import sys

    code = "import sys, krafka.errors; print('krafka.protocol.messages' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_retriable_flags_agree_with_kafka_python() -> None:
    """An independent table: kafka-python's error classes (which stop at code 127)."""
    kerrors = pytest.importorskip("kafka.errors")
    theirs = {
        int(getattr(c, "errno")): bool(getattr(c, "retriable", False))  # noqa: B009
        for c in vars(kerrors).values()
        if isinstance(c, type) and isinstance(getattr(c, "errno", None), int)
    }
    known_differences = {2}  # Java's CorruptRecordException is a RetriableException
    for row in ERROR_CODES:
        if int(row) in theirs and int(row) not in known_differences:
            assert theirs[int(row)] == row.retriable, row.name
