"""Hypothesis strategies for records and batch options."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from krafka._codec.types import Compression

blobs = st.one_of(st.none(), st.binary(max_size=300))
headers = st.lists(
    st.tuples(st.text(max_size=12), st.one_of(st.none(), st.binary(max_size=40))), max_size=4
)
timestamps = st.integers(min_value=0, max_value=2**41)
record_fields = st.fixed_dictionaries(
    {"key": blobs, "value": blobs, "headers": headers, "timestamp": timestamps}
)
compressions = st.sampled_from(list(Compression))
batch_options = st.fixed_dictionaries(
    {
        "compression": compressions,
        "base_offset": st.integers(min_value=0, max_value=2**40),
        "producer_id": st.integers(min_value=-1, max_value=2**40),
        "producer_epoch": st.integers(min_value=-1, max_value=2**15 - 1),
        "base_sequence": st.integers(min_value=-1, max_value=2**30),
        "transactional": st.booleans(),
    }
)


def build(codec: Any, fields: list[dict[str, Any]]) -> list[Any]:
    return [codec.Record(**f) for f in fields]
