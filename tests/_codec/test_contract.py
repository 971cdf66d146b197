"""Both implementations provide everything `contract.CodecImplementation` names."""

from __future__ import annotations

from types import ModuleType

from krafka._codec.contract import CodecImplementation


def contract_names() -> set[str]:
    names = set(CodecImplementation.__annotations__)
    names |= {n for n in vars(CodecImplementation) if not n.startswith("_")}
    return names


def test_implementation_satisfies_the_contract(codec: ModuleType):
    missing = {n for n in contract_names() if not hasattr(codec, n)}
    assert missing == set()
    assert codec.name in ("pure", "compiled")
    for name in contract_names() - {"name"}:
        assert callable(getattr(codec, name)), name
