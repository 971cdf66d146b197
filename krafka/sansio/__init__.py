"""I/O-free state machines (h11 style): bytes and an explicit `now` in; bytes to send,
events and deadlines out. Never imports anyio, asyncio, trio, socket, ssl, threading or time.

* `krafka.sansio.connection.BrokerConnection` — one broker connection: framing, correlation,
  ApiVersions gating, pipelining, priority lanes, deadlines, KIP-219 throttling, SASL, KIP-368.
* `krafka.sansio.metadata.ClusterMetadata` — the cluster view and its refresh/rebootstrap policy.
* `krafka.sansio.backoff` — exponential backoff with jitter.
* `krafka.sansio.sasl` — PLAIN, SCRAM-SHA-256/512, OAUTHBEARER.
* `krafka.sansio.secret.Secret` — credentials masked in repr and logs.
"""
