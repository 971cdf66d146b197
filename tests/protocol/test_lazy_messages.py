"""What using the protocol layer loads: a message module when one of its names is first used,
a class of `REQUESTS` / `RESPONSES` when it is looked up, and the committed codecs
(`krafka.protocol.codecs`) rather than code generated at run time. Imports are observed in a
fresh interpreter (`sys.modules`), since this one has loaded everything."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from krafka.protocol import REQUESTS, RESPONSES, _compile, messages
from krafka.protocol.api_table import ApiTable
from krafka.protocol.messages.fetch_response import FetchResponse

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


def test_a_message_codec_is_the_committed_one() -> None:
    for function in (_compile.decoder(FetchResponse, 16), _compile.encoder(FetchResponse, 16)):
        assert Path(function.__code__.co_filename).parts[-2:] == ("codecs", "fetch_response.py")


@pytest.mark.parametrize("table", [REQUESTS, RESPONSES], ids=["requests", "responses"])
def test_the_committed_codecs_do_what_generated_ones_do(table: ApiTable[Any, Any]) -> None:
    """The committed functions and the ones `_compile` generates at run time for a struct
    outside the messages write the same bytes and read them back alike."""
    for cls in table.values():
        for version in range(cls.MIN_VERSION, cls.MAX_VERSION + 1):
            committed: list[bytes] = []
            generated: list[bytes] = []
            _compile.encoder(cls, version)(cls(), committed.append)
            _compile.build_encoder(cls, version)(cls(), generated.append)
            data = b"".join(committed)
            assert data == b"".join(generated), (cls.__name__, version)
            view = memoryview(data)
            assert _compile.decoder(cls, version)(view, 0) == _compile.build_decoder(cls, version)(
                view, 0
            )
