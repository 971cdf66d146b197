"""The committed `krafka/protocol/messages/` is exactly what the generator writes today."""

from __future__ import annotations

import filecmp
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "krafka" / "protocol" / "messages"
SCHEMAS = ROOT.parent / "shared" / "kafka-protocol" / "message"


def test_regenerated_output_matches_committed(tmp_path: Path) -> None:
    if not SCHEMAS.is_dir():
        pytest.skip(f"schemas not found at {SCHEMAS}")
    sys.path.insert(0, str(ROOT))
    try:
        from tools.generate_protocol import generate, ruff_format
    finally:
        sys.path.remove(str(ROOT))
    out = tmp_path / "messages"
    generate(SCHEMAS, out)
    # Format a copy of the committed files with the same ruff, so a newer ruff release that
    # formats differently does not read as drift; any content difference still fails.
    committed = tmp_path / "committed"
    shutil.copytree(COMMITTED, committed, ignore=shutil.ignore_patterns("__pycache__"))
    ruff_format(committed)
    new = sorted(p.name for p in out.glob("*.py"))
    old = sorted(p.name for p in committed.glob("*.py"))
    assert new == old
    _match, mismatch, errors = filecmp.cmpfiles(out, committed, new, shallow=False)
    assert not mismatch and not errors, f"regenerate with tools/generate_protocol.py: {mismatch}"


def test_every_broker_api_is_generated() -> None:
    from krafka.protocol import REQUESTS, RESPONSES, ApiKey

    assert len(REQUESTS) == len(RESPONSES) == len(ApiKey) >= 70
    assert (int(ApiKey.PRODUCE), int(ApiKey.FETCH), int(ApiKey.API_VERSIONS)) == (0, 1, 18)
    for key, req in REQUESTS.items():
        resp = RESPONSES[key]
        assert req.API_KEY == resp.API_KEY == key
        assert (req.MIN_VERSION, req.MAX_VERSION) == (resp.MIN_VERSION, resp.MAX_VERSION)
