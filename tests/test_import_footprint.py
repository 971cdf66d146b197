"""What importing krafka and running a client load, seen in `sys.modules` of a fresh interpreter:
`import krafka` loads no client; a client's import leaves out the other clients, the admin calls,
OpenTelemetry, Arrow and Spark; a running client loads the messages of the APIs it speaks, not
those of the others. (A pin on the start-up cost without timing anything.)"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = "krafka.protocol.messages."

#: Messages of APIs only the admin client, the share consumer or the producer speak.
ADMIN_MESSAGES = {
    "create_topics_request", "create_acls_request", "describe_configs_request",
    "incremental_alter_configs_request", "alter_user_scram_credentials_request",
    "describe_cluster_request", "describe_log_dirs_request", "create_delegation_token_request",
}  # fmt: skip
SHARE_MESSAGES = {
    "share_fetch_request",
    "share_acknowledge_request",
    "share_group_heartbeat_request",
}
PRODUCER_MESSAGES = {"produce_request", "produce_response", "init_producer_id_request"}
CONSUMER_MESSAGES = {
    "fetch_request",
    "fetch_response",
    "list_offsets_request",
    "join_group_request",
}
#: Modules a client's import must not pull in when it does not use them.
ELSEWHERE = {
    "krafka.io.admin", "krafka.sansio.admin.acls", "krafka.io.share_consumer",
    "krafka.sansio.share", "krafka.spark", "krafka.cli", "pyarrow", "opentelemetry.metrics",
    "opentelemetry.trace",
}  # fmt: skip


def loaded(code: str) -> set[str]:
    """`sys.modules` once `code` ran in a fresh interpreter."""
    report = "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    program = textwrap.dedent(code) + report
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          cwd=ROOT, check=True, timeout=120)  # fmt: skip
    return set(json.loads(done.stdout.splitlines()[-1]))


def messages(modules: set[str]) -> set[str]:
    return {m.removeprefix(MESSAGES) for m in modules if m.startswith(MESSAGES)}


def test_import_krafka_loads_no_client_and_no_message() -> None:
    modules = loaded("import krafka")
    assert not messages(modules)
    assert "anyio" not in modules and "krafka.io.client" not in modules


def test_a_consumers_import_leaves_out_what_it_does_not_use() -> None:
    modules = loaded("from krafka import Consumer")
    assert not modules & ELSEWHERE
    assert {"krafka.io.producer", "krafka.sansio.producer.engine"}.isdisjoint(modules)
    assert not messages(modules) & (ADMIN_MESSAGES | SHARE_MESSAGES | PRODUCER_MESSAGES)


def test_a_producers_import_leaves_out_what_it_does_not_use() -> None:
    modules = loaded("from krafka import Producer")
    assert not modules & ELSEWHERE
    assert {"krafka.io.consumer", "krafka.sansio.consumer.engine"}.isdisjoint(modules)
    assert not messages(modules) & (ADMIN_MESSAGES | SHARE_MESSAGES | CONSUMER_MESSAGES)


def test_running_clients_load_only_the_messages_of_the_apis_they_speak(broker: Any) -> None:
    topic = f"footprint-{uuid.uuid4().hex[:8]}"
    code = f"""
        import anyio
        from krafka import Consumer, Producer, TopicPartition

        async def main():
            async with Producer({broker.bootstrap_servers!r}) as producer:
                await producer.send_and_wait({topic!r}, b"v", partition=0)
            async with Consumer({broker.bootstrap_servers!r}, auto_offset_reset="earliest") as c:
                await c.assign([TopicPartition({topic!r}, 0)])
                assert (await c.recv()).value == b"v"

        anyio.run(main)
    """
    modules = loaded(code)
    used = messages(modules)
    assert {"produce_request", "produce_response", "fetch_request", "fetch_response"} <= used
    assert {"metadata_response", "api_versions_response"} <= used
    assert not used & (ADMIN_MESSAGES | SHARE_MESSAGES)
    assert not modules & ELSEWHERE
