"""Generate `krafka/protocol/messages/` from Kafka's JSON message schemas.

Usage: python tools/generate_protocol.py [--schemas DIR] [--out DIR]

Reads every `*.json` in the schema folder (default `../shared/kafka-protocol/message`), lays the
overlay folder `tools/protocol_overlay/` over it (files there replace those of the same name),
keeps the client-facing messages (`listeners` include `broker`), the request/response headers
and the ConsumerProtocol data schemas, and writes one module per message plus the package
`__init__`, formatted with `ruff format`. Output is deterministic; a test regenerates it into a
temporary folder and compares it with the committed copy.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.protocol_gen.emit import module_name, module_source, package_init  # noqa: E402
from tools.protocol_gen.schema_load import load_all, selected  # noqa: E402

DEFAULT_SCHEMAS = ROOT.parent / "shared" / "kafka-protocol" / "message"
OVERLAY = ROOT / "tools" / "protocol_overlay"
DEFAULT_OUT = ROOT / "krafka" / "protocol" / "messages"


def generate(schemas_dir: Path, out_dir: Path, overlay: Path = OVERLAY) -> list[Path]:
    """Write the generated package into `out_dir` (replacing it); return the files written."""
    chosen = selected(load_all(schemas_dir, overlay))
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    written = []
    for schema in chosen:
        path = out_dir / f"{module_name(schema)}.py"
        path.write_text(module_source(schema), encoding="utf-8")
        written.append(path)
    init = out_dir / "__init__.py"
    init.write_text(package_init(chosen), encoding="utf-8")
    written.append(init)
    ruff_format(out_dir)
    return written


def ruff_format(directory: Path) -> None:
    """Format `directory` with the ruff installed beside this interpreter (not one on PATH)."""
    command = [sys.executable, "-m", "ruff", "format", "--quiet", "--isolated"]
    subprocess.run([*command, "--line-length", "100", str(directory)], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemas", type=Path, default=DEFAULT_SCHEMAS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    files = generate(args.schemas, args.out)
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
