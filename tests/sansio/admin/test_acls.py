"""ACL handlers: typed bindings and filters, CreateAcls / DescribeAcls / DeleteAcls."""

from __future__ import annotations

import pytest
from _admin_scripted import start, take

from krafka.errors import SecurityDisabledError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
)
from krafka.sansio.admin.acls import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    CreateAcls,
    DeleteAcls,
    DescribeAcls,
    PatternType,
    ResourceType,
    authorized_operations,
)
from krafka.sansio.admin.routing import ToAnyBroker

READ = AclBinding(
    ResourceType.TOPIC,
    "orders",
    PatternType.LITERAL,
    "User:alice",
    "*",
    AclOperation.READ,
    AclPermissionType.ALLOW,
)
WRITE = AclBinding(
    "topic",
    "pay-",
    "prefixed",
    "User:bob",
    "10.0.0.1",
    "write",
    "deny",  # type: ignore[arg-type]
)


def test_bindings_and_filters_are_typed() -> None:
    assert WRITE.pattern_type is PatternType.PREFIXED and WRITE.operation is AclOperation.WRITE
    assert str(READ) == "ALLOW User:alice READ on TOPIC literal 'orders' from *"
    with pytest.raises(ValueError, match="for filters"):
        AclBinding(
            ResourceType.ANY,
            "x",
            PatternType.LITERAL,
            "User:a",
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        )
    with pytest.raises(ValueError, match="for filters"):
        AclBinding(
            ResourceType.TOPIC,
            "x",
            PatternType.MATCH,
            "User:a",
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        )
    everything = AclBindingFilter()
    assert everything.resource_type is ResourceType.ANY and everything.principal is None
    with pytest.raises(ValueError):
        AclBindingFilter(operation=AclOperation.UNKNOWN)


def test_authorized_operations_bits() -> None:
    assert authorized_operations(-(2**31)) is None
    bits = sum(1 << op for op in (AclOperation.READ, AclOperation.WRITE, AclOperation.ALL))
    assert authorized_operations(bits) == {AclOperation.READ, AclOperation.WRITE}


def test_create_acls_reports_each_binding() -> None:
    _, talk, op = start(CreateAcls(), ToAnyBroker(), [READ, WRITE])
    sent, request = take(talk, CreateAclsRequest)
    assert sent.min_version == 1
    first = request.creations[0]
    assert (first.resource_type, first.resource_name, first.resource_pattern_type) == (
        2,
        "orders",
        3,
    )
    assert (first.principal, first.host, first.operation, first.permission_type) == (
        "User:alice",
        "*",
        3,
        3,
    )
    R = CreateAclsResponse.AclCreationResult
    talk.reply(
        sent,
        CreateAclsResponse(
            results=[R(), R(error_code=ErrorCode.SECURITY_DISABLED, error_message="no authorizer")]
        ),
    )
    results = talk.outcome(op)
    assert results[READ] is None and isinstance(results[WRITE], SecurityDisabledError)
    assert "no authorizer" in str(results[WRITE])


def test_describe_acls_flattens_resources() -> None:
    acl_filter = AclBindingFilter(resource_type=ResourceType.TOPIC, principal="User:alice")
    _, talk, op = start(DescribeAcls(), ToAnyBroker(), [acl_filter])
    sent, request = take(talk, DescribeAclsRequest)
    assert (
        request.resource_type_filter,
        request.pattern_type_filter,
        request.principal_filter,
    ) == (2, 1, "User:alice")
    assert request.resource_name_filter is None and request.operation == 1
    Res = DescribeAclsResponse.DescribeAclsResource
    A = Res.AclDescription
    talk.reply(
        sent,
        DescribeAclsResponse(
            resources=[
                Res(
                    resource_type=2,
                    resource_name="orders",
                    pattern_type=3,
                    acls=[A(principal="User:alice", host="*", operation=3, permission_type=3)],
                ),
            ]
        ),
    )
    assert talk.outcome(op)[acl_filter] == (READ,)


def test_describe_acls_error_fails_the_filter() -> None:
    _, talk, op = start(DescribeAcls(), ToAnyBroker(), [AclBindingFilter()])
    sent, _ = take(talk, DescribeAclsRequest)
    talk.reply(sent, DescribeAclsResponse(error_code=ErrorCode.SECURITY_DISABLED))
    assert isinstance(talk.outcome(op)[AclBindingFilter()], SecurityDisabledError)


def test_delete_acls_returns_what_each_filter_deleted() -> None:
    by_user = AclBindingFilter(principal="User:alice")
    by_topic = AclBindingFilter(
        resource_type=ResourceType.TOPIC, resource_name="pay-", pattern_type=PatternType.PREFIXED
    )
    _, talk, op = start(DeleteAcls(), ToAnyBroker(), [by_user, by_topic])
    sent, request = take(talk, DeleteAclsRequest)
    assert [f.principal_filter for f in request.filters] == ["User:alice", None]
    F = DeleteAclsResponse.DeleteAclsFilterResult
    M = F.DeleteAclsMatchingAcl
    talk.reply(
        sent,
        DeleteAclsResponse(
            filter_results=[
                F(
                    matching_acls=[
                        M(
                            resource_type=2,
                            resource_name="orders",
                            pattern_type=3,
                            principal="User:alice",
                            host="*",
                            operation=3,
                            permission_type=3,
                        )
                    ]
                ),
                F(
                    matching_acls=[
                        M(
                            error_code=ErrorCode.SECURITY_DISABLED,
                            resource_type=2,
                            resource_name="pay-",
                            pattern_type=4,
                            principal="User:bob",
                            host="10.0.0.1",
                            operation=4,
                            permission_type=2,
                        )
                    ]
                ),
            ]
        ),
    )
    results = talk.outcome(op)
    assert results[by_user] == (READ,)
    assert isinstance(results[by_topic], SecurityDisabledError) and "User:bob" in str(
        results[by_topic]
    )
