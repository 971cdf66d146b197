"""The admin client on anyio: `AdminClient` is the façade, one module per family of calls
(topics, configs, groups, group offsets, offsets, cluster, ACLs, SCRAM, delegation tokens,
quotas, transactions)."""

from krafka.io.admin.client import AdminClient

__all__ = ["AdminClient"]
