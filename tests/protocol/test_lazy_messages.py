"""What using the protocol layer loads: a message module when one of its names is first used,
a class of `REQUESTS` / `RESPONSES` when it is looked up. Imports are observed in a
fresh interpreter (`sys.modules`), since this one has loaded everything."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from krafka.protocol import messages

ROOT = Path(__file__).resolve().parents[2]


def loaded_messages(code: str) -> set[str]:
    """The generated message modules loaded once `code` ran in a fresh interpreter."""
    report = """
import json, sys
prefix = "krafka.protocol.messages."
print(json.dumps(sorted(m[len(prefix):] for m in sys.modules if m.startswith(prefix))))
"""
    program = textwrap.dedent(code) + report
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          cwd=ROOT, check=True)  # fmt: skip
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_a_message_loads_its_module_alone() -> None:
    assert loaded_messages("import krafka.protocol.messages") == set()
    assert loaded_messages("from krafka.protocol.messages import FetchRequest") == {"fetch_request"}


def test_the_api_tables_load_a_class_when_it_is_looked_up() -> None:
    code = """
        from krafka.protocol import REQUESTS, RESPONSES, ApiKey
        assert len(REQUESTS) == len(RESPONSES) == len(ApiKey)
        assert ApiKey.CREATE_ACLS in REQUESTS and set(REQUESTS) == set(ApiKey)
        REQUESTS[ApiKey.METADATA]
        RESPONSES[ApiKey.METADATA]
    """
    assert loaded_messages(code) == {"metadata_request", "metadata_response"}


def test_every_exported_name_resolves_and_is_listed() -> None:
    for name in messages.__all__:
        value = getattr(messages, name)
        assert not isinstance(value, type) or value.__name__ == name
    assert set(messages.__all__) <= set(dir(messages))
    namespace: dict[str, object] = {}
    exec("from krafka.protocol.messages import *", namespace)
    assert set(messages.__all__) <= set(namespace)
    with pytest.raises(AttributeError, match="NoSuchRequest"):
        _ = messages.NoSuchRequest
