"""Client quotas on Apache Kafka: set, describe with each kind of filter, validate only,
remove; refusals per entity."""

from __future__ import annotations

from typing import Any

import pytest
from _members import eventually, unique

from krafka import AdminClient, ClientQuotaEntity, ClientQuotaFilter
from krafka.errors import InvalidRequestError
from krafka.sansio.admin.quotas import ANY, QuotaFilterComponent

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


async def test_quotas_are_set_described_and_removed(kafka_cluster: Any) -> None:
    slow, user = unique("slow"), unique("quser")
    mine = {"client-id": slow}
    both = {"user": user, "client-id": slow}
    async with AdminClient(kafka_cluster.bootstrap_servers, default_api_timeout=15.0) as admin:
        dry = await admin.alter_client_quotas(
            [(mine, {"producer_byte_rate": 1024})], validate_only=True
        )
        assert dry == {ClientQuotaEntity(mine): None}
        assert await admin.describe_client_quotas(mine) == {}
        results = await admin.alter_client_quotas(
            [
                (mine, {"producer_byte_rate": 1024, "consumer_byte_rate": 2048}),
                (both, {"request_percentage": 50}),
                ({"client-id": unique("bad")}, {"consumer_byte_rate": 0.5}),
            ]
        )
        assert results[ClientQuotaEntity(mine)] is None
        assert results[ClientQuotaEntity(both)] is None
        (bad,) = results.failed.values()
        assert isinstance(bad, InvalidRequestError) and "fractional" in str(bad)

        only_mine = ClientQuotaFilter.from_mapping(mine, strict=True)
        described = await eventually(lambda: admin.describe_client_quotas(only_mine), bool)
        assert described == {
            ClientQuotaEntity(mine): {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0}
        }
        with_others = await admin.describe_client_quotas(mine)  # not strict: any other types too
        assert set(with_others) == {ClientQuotaEntity(mine), ClientQuotaEntity(both)}
        by_user = await admin.describe_client_quotas({"user": user})
        assert by_user == {ClientQuotaEntity(both): {"request_percentage": 50.0}}
        strict = ClientQuotaFilter((QuotaFilterComponent.of_entity("user", user),), strict=True)
        assert await admin.describe_client_quotas(strict) == {}
        named = await admin.describe_client_quotas({"user": ANY, "client-id": slow})
        assert list(named) == [both]
        assert await admin.describe_client_quotas({"user": None, "client-id": slow}) == {}
        everything = await admin.describe_client_quotas()
        assert {ClientQuotaEntity(mine), ClientQuotaEntity(both)} <= set(everything)

        await admin.alter_client_quotas(
            [
                (mine, {"producer_byte_rate": None, "consumer_byte_rate": None}),
                (both, {"request_percentage": None}),
            ]
        )
        await eventually(lambda: admin.describe_client_quotas({"client-id": slow}), lambda d: not d)
