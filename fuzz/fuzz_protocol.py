"""atheris harness: every response decoder of the generated protocol layer, every version.

The first two input bytes pick the API and version; the rest is the response body. Invariant:
decode, or raise `krafka.errors.ProtocolError` (RemoteProtocolError) — nothing else; a decoded
message must re-encode without error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports():
    from krafka.errors import ProtocolError
    from krafka.protocol import RESPONSES

TARGETS = [
    (cls, version)
    for cls in RESPONSES.values()
    for version in range(cls.MIN_VERSION, cls.MAX_VERSION + 1)
]


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    cls, version = TARGETS[int.from_bytes(data[:2], "big") % len(TARGETS)]
    try:
        message = cls.decode(data[2:], version)
    except ProtocolError:
        return
    message.encode(version)


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
