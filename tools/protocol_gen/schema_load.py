"""Load Kafka's JSON message schemas (with `//` comments) and the krafka overlay."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_VERSION = 0x7FFF
PRIMITIVES = {
    "bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
    "string", "bytes", "records", "uuid",
}  # fmt: skip


def strip_comments(text: str) -> str:
    """Remove `//` comments outside JSON strings."""
    out: list[str] = []
    i, n, in_str = 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(strip_comments(path.read_text(encoding="utf-8")))
    return data


def parse_versions(spec: str | None) -> tuple[int, int]:
    """'3+' -> (3, MAX), '1-4' -> (1, 4), '5' -> (5, 5), 'none'/None -> (1, 0)."""
    if spec is None or spec == "none" or spec == "":
        return (1, 0)
    spec = spec.strip()
    if spec.endswith("+"):
        return (int(spec[:-1]), MAX_VERSION)
    if "-" in spec:
        lo, hi = spec.split("-")
        return (int(lo), int(hi))
    return (int(spec), int(spec))


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return s.lower()


@dataclass
class Schema:
    name: str
    type: str
    path: Path
    raw: dict[str, Any]
    overlay_source: str | None = None
    common: dict[str, dict[str, Any]] = field(default_factory=dict)


def load_all(message_dir: Path, overlay_dir: Path | None) -> dict[str, Schema]:
    """Every schema by name; overlay files replace snapshot files of the same name."""
    paths = {p.name: p for p in sorted(message_dir.glob("*.json"))}
    overlays: dict[str, str] = {}
    if overlay_dir is not None and overlay_dir.is_dir():
        for p in sorted(overlay_dir.glob("*.json")):
            paths[p.name] = p
            first = p.read_text(encoding="utf-8").splitlines()[0]
            overlays[p.name] = first.lstrip("/ ").strip()
    out: dict[str, Schema] = {}
    for fname, path in sorted(paths.items()):
        raw = load_json(path)
        s = Schema(raw["name"], raw["type"], path, raw, overlays.get(fname))
        s.common = {c["name"]: c for c in raw.get("commonStructs", [])}
        out[s.name] = s
    return out


def selected(schemas: dict[str, Schema]) -> list[Schema]:
    """Client-facing messages (listeners include broker), headers, ConsumerProtocol data."""
    keep = []
    for s in schemas.values():
        if s.type == "response":
            req = schemas.get(s.name[: -len("Response")] + "Request")
            if req is not None and "broker" in req.raw.get("listeners", []):
                keep.append(s)
        elif s.type == "request":
            if "broker" in s.raw.get("listeners", []):
                keep.append(s)
        elif s.type == "header" or s.name.startswith("ConsumerProtocol"):
            keep.append(s)
    return sorted(keep, key=lambda s: s.name)
