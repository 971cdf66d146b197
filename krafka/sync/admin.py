"""The blocking `AdminClient`: every call of `krafka.AdminClient`, same arguments, same
results (`Results` per item) and exceptions, for scripts and notebooks.

    from krafka.sync import AdminClient
    with AdminClient(bootstrap_servers="127.0.0.1:9092") as admin:
        admin.create_topics([NewTopic("orders", 6)]).raise_for_errors()
        print(admin.list_topics())
"""

from __future__ import annotations

from krafka.io.admin import AdminClient as AsyncAdminClient
from krafka.sync.client import SyncClient, blocking, on_loop

_A = AsyncAdminClient


class AdminClient(SyncClient[AsyncAdminClient]):
    """`krafka.AdminClient` with blocking methods, on a background thread of its own."""

    _async_class = AsyncAdminClient

    metrics = on_loop(_A.metrics)
    create_topics = blocking(_A.create_topics)
    client_instance_id = blocking(_A.client_instance_id)
    update_seed_brokers = on_loop(_A.update_seed_brokers)
    delete_topics = blocking(_A.delete_topics)
    list_topics = blocking(_A.list_topics)
    describe_topics = blocking(_A.describe_topics)
    create_partitions = blocking(_A.create_partitions)
    describe_configs = blocking(_A.describe_configs)
    alter_configs = blocking(_A.alter_configs)
    list_groups = blocking(_A.list_groups)
    describe_groups = blocking(_A.describe_groups)
    delete_groups = blocking(_A.delete_groups)
    list_group_offsets = blocking(_A.list_group_offsets)
    alter_group_offsets = blocking(_A.alter_group_offsets)
    delete_group_offsets = blocking(_A.delete_group_offsets)
    list_offsets = blocking(_A.list_offsets)
    delete_records = blocking(_A.delete_records)
    describe_cluster = blocking(_A.describe_cluster)
    describe_log_dirs = blocking(_A.describe_log_dirs)
    create_acls = blocking(_A.create_acls)
    describe_acls = blocking(_A.describe_acls)
    delete_acls = blocking(_A.delete_acls)
    describe_user_scram_credentials = blocking(_A.describe_user_scram_credentials)
    alter_user_scram_credentials = blocking(_A.alter_user_scram_credentials)
    create_delegation_token = blocking(_A.create_delegation_token)
    renew_delegation_token = blocking(_A.renew_delegation_token)
    expire_delegation_token = blocking(_A.expire_delegation_token)
    describe_delegation_tokens = blocking(_A.describe_delegation_tokens)
    alter_client_quotas = blocking(_A.alter_client_quotas)
    describe_client_quotas = blocking(_A.describe_client_quotas)
    describe_producers = blocking(_A.describe_producers)
    list_transactions = blocking(_A.list_transactions)
    describe_transactions = blocking(_A.describe_transactions)


__all__ = ["AdminClient"]
