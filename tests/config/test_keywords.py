"""Unknown constructor keywords raise errors that name the public class and teach krafka's
spelling: other libraries' names with their units converted, the closest keyword otherwise."""

from __future__ import annotations

from typing import Any

import pytest

import krafka
import krafka.sync
from krafka.errors import ConfigError, UnknownKeywordError

ASYNC = {
    "Producer": krafka.Producer,
    "Consumer": krafka.Consumer,
    "ShareConsumer": krafka.ShareConsumer,
    "AdminClient": krafka.AdminClient,
}
SYNC = {
    "Producer": krafka.sync.Producer,
    "Consumer": krafka.sync.Consumer,
    "ShareConsumer": krafka.sync.ShareConsumer,
    "AdminClient": krafka.sync.AdminClient,
}


def _message(cls: Any, *args: Any, **kwargs: Any) -> str:
    if cls in (krafka.ShareConsumer, krafka.sync.ShareConsumer):
        kwargs.setdefault("group_id", "g")
    with pytest.raises(TypeError) as info:
        cls(*args, **kwargs)
    assert isinstance(info.value, UnknownKeywordError) and isinstance(info.value, ConfigError)
    return str(info.value)


@pytest.mark.parametrize("flavour", ["async", "sync"])
@pytest.mark.parametrize("name", list(ASYNC))
def test_the_error_names_the_public_class_and_the_closest_keyword(name: str, flavour: str) -> None:
    cls = (ASYNC if flavour == "async" else SYNC)[name]
    message = _message(cls, "127.0.0.1:9", client_idd="x")
    assert message.startswith(f"{name}() got an unexpected keyword argument 'client_idd'")
    assert "did you mean 'client_id'?" in message
    assert "KafkaClient" not in message


@pytest.mark.parametrize(
    ("cls", "keywords", "says"),
    [
        (krafka.Producer, {"linger_ms": 5}, "krafka takes seconds: linger=0.005"),
        (krafka.Producer, {"compression_type": "gzip"}, "krafka's keyword is compression='gzip'"),
        (krafka.Producer, {"value_serializer": str.encode}, "values are bytes"),
        (krafka.Producer, {"request_timeout_ms": 40_000}, "request_timeout=40"),
        (krafka.Producer, {"max_batch_size": 16384}, "batch_size=16384"),
        (krafka.Producer, {"sasl_plain_username": "u"}, "sasl_username='u'"),
        (krafka.Producer, {"security_protocol": "SSL"}, "Producer.from_config({'security.pr"),
        (krafka.Producer, {"group_id": "g"}, "group.id is a setting of Consumer"),
        (krafka.Producer, {"queue_buffering_max_kbytes": 4}, "takes bytes: buffer_memory=4096"),
        (krafka.Consumer, {"ssl_cafile": "ca.pem"}, "Consumer.from_config({'ssl.ca.location'"),
        (krafka.Consumer, {"session_timeout_ms": 10_000}, "seconds: session_timeout=10"),
        (krafka.Consumer, {"auto_commit_interval_ms": 500}, "auto_commit_interval=0.5"),
        (krafka.Consumer, {"fetch_max_wait_ms": 100}, "fetch_max_wait=0.1"),
        (krafka.Consumer, {"linger_ms": 5}, "linger.ms is a setting of Producer"),
        (krafka.ShareConsumer, {"max_poll_interval_ms": 1000}, "max_poll_interval=1"),
        (krafka.AdminClient, {"api_version": "auto"}, "asks brokers for their API versions"),
        (krafka.sync.Producer, {"linger_ms": 5}, "krafka takes seconds: linger=0.005"),
        (krafka.sync.Consumer, {"enable_auto_commit": False, "max_poll_records_": 1},
         "did you mean 'max_poll_records'?"),
    ],
)  # fmt: skip
def test_other_libraries_keywords_get_krafkas_spelling_and_unit(
    cls: Any, keywords: dict[str, Any], says: str
) -> None:
    assert says in _message(cls, "127.0.0.1:9", **keywords)


def test_every_unknown_keyword_is_named_once() -> None:
    message = _message(krafka.Producer, "127.0.0.1:9", linger_ms=5, acks_=1)
    assert "'linger_ms'" in message and "'acks_'" in message


@pytest.mark.parametrize("name", list(ASYNC))
@pytest.mark.parametrize("flavour", ["async", "sync"])
def test_a_properties_dict_first_points_to_from_config(name: str, flavour: str) -> None:
    cls = (ASYNC if flavour == "async" else SYNC)[name]
    message = _message(cls, {"bootstrap.servers": "127.0.0.1:9", "linger.ms": 5})
    assert f"{name}.from_config(" in message and "not a dict" in message
