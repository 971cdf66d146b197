"""Config handlers: DescribeConfigs and IncrementalAlterConfigs — where each resource goes,
what the requests carry at each version, and how entries are read."""

from __future__ import annotations

import pytest
from _admin_scripted import answer_metadata, broker, metadata, start, take

from krafka.errors import InvalidConfigError, UnknownTopicOrPartitionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from krafka.sansio.actions import AnyBroker
from krafka.sansio.admin.configs import (
    AlterConfigOp,
    AlterConfigOpType,
    AlterConfigs,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
    ConfigType,
    DescribeConfigs,
)
from krafka.sansio.admin.routing import ToBrokers

Result = DescribeConfigsResponse.DescribeConfigsResult
Entry = Result.DescribeConfigsResourceResult
Synonym = Entry.DescribeConfigsSynonym


def routing() -> ToBrokers[ConfigResource]:
    return ToBrokers(lambda r: r.node_id)


def test_resources_and_ops() -> None:
    assert ConfigResource.broker(2) == ConfigResource(ConfigResourceType.BROKER, "2")
    assert ConfigResource.broker(2).node_id == 2 and ConfigResource.broker().node_id is None
    assert ConfigResource.topic("t").node_id is None
    assert AlterConfigOp.delete("x") == AlterConfigOp("x", None, AlterConfigOpType.DELETE)
    with pytest.raises(ValueError, match="needs a value"):
        AlterConfigOp("x", None, AlterConfigOpType.APPEND)


def test_a_brokers_configs_are_asked_of_that_broker_the_rest_of_any() -> None:
    keys = [ConfigResource.topic("t"), ConfigResource.broker(2), ConfigResource.broker()]
    _, talk, op = start(DescribeConfigs(), routing(), keys)
    answer_metadata(talk, metadata())
    talk.step()
    targets = {
        s.target: [(r.resource_type, r.resource_name) for r in talk.request(s).resources]
        for s in talk.outbox
    }
    assert targets == {AnyBroker(): [(2, "t"), (4, "")], broker(2): [(4, "2")]}
    for sent in list(talk.outbox):
        talk.outbox.remove(sent)
        results = [
            Result(resource_type=r.resource_type, resource_name=r.resource_name)
            for r in talk.request(sent).resources
        ]
        talk.reply(sent, DescribeConfigsResponse(results=results))
    assert talk.outcome(op) == {key: {} for key in keys}


@pytest.mark.parametrize("version", [0, 1, 3, 4])
def test_describe_configs_reads_sources_synonyms_types_and_docs(version: int) -> None:
    topic = ConfigResource.topic("t")
    handler = DescribeConfigs(["retention.ms"], include_synonyms=True, include_documentation=True)
    _, talk, op = start(
        handler,
        routing(),
        [topic, ConfigResource.topic("gone")],
        versions={ApiKey.DESCRIBE_CONFIGS: version},
    )
    sent, request = take(talk, DescribeConfigsRequest)
    assert [r.configuration_keys for r in request.resources] == [["retention.ms"]] * 2
    assert request.include_synonyms is (version >= 1)
    assert request.include_documentation is (version >= 3)
    if version == 0:
        entry = Entry(name="retention.ms", value="1000", is_default=True)
    else:
        synonyms = [Synonym(name="log.retention.ms", value="1000", source=4)]
        entry = Entry(
            name="retention.ms",
            value="1000",
            config_source=1,
            synonyms=synonyms,
            config_type=5 if version >= 3 else 0,
            documentation="doc" if version >= 3 else None,
        )
    secret = Entry(name="sasl.jaas.config", value=None, is_sensitive=True, read_only=True)
    talk.reply(
        sent,
        DescribeConfigsResponse(
            results=[
                Result(resource_type=2, resource_name="t", configs=[entry, secret]),
                Result(
                    resource_type=2,
                    resource_name="gone",
                    error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message="no such topic",
                ),
            ]
        ),
    )
    results = talk.outcome(op)
    entries = results[topic]
    retention = entries["retention.ms"]
    assert retention.value == "1000"
    if version == 0:
        assert retention.source is ConfigSource.DEFAULT_CONFIG and retention.is_default
    else:
        assert retention.source is ConfigSource.DYNAMIC_TOPIC_CONFIG and not retention.is_default
        assert retention.synonyms[0].source is ConfigSource.STATIC_BROKER_CONFIG
    if version >= 3:
        assert retention.type is ConfigType.LONG and retention.documentation == "doc"
    assert entries["sasl.jaas.config"].value is None and entries["sasl.jaas.config"].is_sensitive
    gone = results[ConfigResource.topic("gone")]
    assert isinstance(gone, UnknownTopicOrPartitionError) and "no such topic" in str(gone)


def test_alter_configs_sends_each_op_and_reports_each_resource() -> None:
    topic, brk = ConfigResource.topic("t"), ConfigResource.broker(3)
    changes = {
        topic: (
            AlterConfigOp.set("retention.ms", "60000"),
            AlterConfigOp.delete("segment.ms"),
            AlterConfigOp.append("cleanup.policy", "compact"),
            AlterConfigOp.subtract("cleanup.policy", "delete"),
        ),
        brk: (AlterConfigOp.set("log.cleaner.threads", "2"),),
    }
    _, talk, op = start(AlterConfigs(changes, validate_only=True), routing(), changes)
    answer_metadata(talk, metadata())
    talk.step()
    by_target = {s.target: talk.request(s) for s in talk.outbox}
    any_request, broker_request = by_target[AnyBroker()], by_target[broker(3)]
    assert any_request.validate_only
    assert [(c.name, c.config_operation, c.value) for c in any_request.resources[0].configs] == [
        ("retention.ms", 0, "60000"),
        ("segment.ms", 1, None),
        ("cleanup.policy", 2, "compact"),
        ("cleanup.policy", 3, "delete"),
    ]
    assert broker_request.resources[0].resource_name == "3"
    R = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse
    for sent in list(talk.outbox):
        talk.outbox.remove(sent)
        res = talk.request(sent).resources[0]
        code = ErrorCode.INVALID_CONFIG if res.resource_type == 4 else 0
        talk.reply(
            sent,
            IncrementalAlterConfigsResponse(
                responses=[
                    R(
                        resource_type=res.resource_type,
                        resource_name=res.resource_name,
                        error_code=code,
                    )
                ]
            ),
        )
    results = talk.outcome(op)
    assert results[topic] is None and isinstance(results[brk], InvalidConfigError)


def test_a_config_error_is_not_retried() -> None:
    topic = ConfigResource.topic("t")
    changes = {topic: (AlterConfigOp.append("x", "y"),)}
    _, talk, op = start(AlterConfigs(changes, False), routing(), [topic])
    sent, _ = take(talk, IncrementalAlterConfigsRequest)
    R = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse
    talk.reply(
        sent,
        IncrementalAlterConfigsResponse(
            responses=[
                R(resource_type=2, resource_name="t", error_code=ErrorCode.REQUEST_TIMED_OUT)
            ]
        ),
    )
    assert type(talk.outcome(op)[topic]).__name__ == "RequestTimedOutError"
