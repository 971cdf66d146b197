"""Client-quota handlers with a scripted broker: entities, removals, filters and per-entity
errors as Kafka encodes them."""

from __future__ import annotations

import pytest
from _admin_scripted import start, take

from krafka.errors import InvalidRequestError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)
from krafka.sansio.admin.quotas import (
    ANY,
    AlterClientQuotas,
    ClientQuotaEntity,
    ClientQuotaFilter,
    DescribeClientQuotas,
    QuotaFilterComponent,
    as_filter,
)
from krafka.sansio.admin.routing import ToAnyBroker

AEntry = AlterClientQuotasResponse.EntryData
AEntity = AEntry.EntityData
DEntry = DescribeClientQuotasResponse.EntryData


def test_entities_are_hashable_and_equal_to_their_dicts() -> None:
    slow = ClientQuotaEntity({"client-id": "slow"})
    assert slow == {"client-id": "slow"} and slow == ClientQuotaEntity(client_id="slow")
    assert {slow: 1}[ClientQuotaEntity({"client-id": "slow"})] == 1
    both = ClientQuotaEntity({"user": "bob", "client-id": None})
    assert both == {"client-id": None, "user": "bob"} and both != slow
    with pytest.raises(ValueError):
        ClientQuotaEntity({})
    with pytest.raises(TypeError):
        ClientQuotaEntity({"user": 5})  # type: ignore[dict-item]


def test_alter_sets_and_removes_per_entity() -> None:
    slow, users = ClientQuotaEntity({"client-id": "slow"}), ClientQuotaEntity({"user": None})
    handler = AlterClientQuotas(
        {slow: {"producer_byte_rate": 1024.0, "consumer_byte_rate": None}, users: {"x": 1.0}},
        validate_only=True,
    )
    _, talk, op = start(handler, ToAnyBroker(), [slow, users])
    sent, request = take(talk, AlterClientQuotasRequest)
    assert request.validate_only
    first, second = request.entries
    assert [(e.entity_type, e.entity_name) for e in first.entity] == [("client-id", "slow")]
    assert [(o.key, o.value, o.remove) for o in first.ops] == [
        ("producer_byte_rate", 1024.0, False),
        ("consumer_byte_rate", 0.0, True),
    ]
    assert [(e.entity_type, e.entity_name) for e in second.entity] == [("user", None)]
    talk.reply(
        sent,
        AlterClientQuotasResponse(
            entries=[
                AEntry(entity=[AEntity(entity_type="client-id", entity_name="slow")]),
                AEntry(
                    entity=[AEntity(entity_type="user", entity_name=None)],
                    error_code=ErrorCode.INVALID_REQUEST,
                    error_message="Unknown quota key x",
                ),
            ]
        ),
    )
    results = talk.outcome(op)
    assert results[slow] is None
    assert isinstance(results[users], InvalidRequestError) and "quota key x" in str(results[users])


def test_describe_sends_the_filter_and_reads_entities() -> None:
    quota_filter = ClientQuotaFilter(
        (
            QuotaFilterComponent.of_entity("user", "bob"),
            QuotaFilterComponent.of_entity_type("client-id"),
        ),
        strict=True,
    )
    _, talk, op = start(DescribeClientQuotas(quota_filter), ToAnyBroker(), ["q"])
    sent, request = take(talk, DescribeClientQuotasRequest)
    assert request.strict
    assert [(c.entity_type, c.match_type, c.match) for c in request.components] == [
        ("user", 0, "bob"),
        ("client-id", 2, None),
    ]
    entity = [
        DEntry.EntityData(entity_type="user", entity_name="bob"),
        DEntry.EntityData(entity_type="client-id", entity_name="c1"),
    ]
    values = [DEntry.ValueData(key="producer_byte_rate", value=2048.0)]
    talk.reply(sent, DescribeClientQuotasResponse(entries=[DEntry(entity=entity, values=values)]))
    assert talk.outcome(op)["q"] == {
        ClientQuotaEntity({"user": "bob", "client-id": "c1"}): {"producer_byte_rate": 2048.0}
    }


def test_filter_shorthand() -> None:
    assert as_filter(None) == ClientQuotaFilter()
    shorthand = as_filter({"client-id": "slow", "user": None, "ip": ANY})
    assert shorthand.components == (
        QuotaFilterComponent.of_entity("client-id", "slow"),
        QuotaFilterComponent.of_default_entity("user"),
        QuotaFilterComponent.of_entity_type("ip"),
    )
    assert not shorthand.strict
