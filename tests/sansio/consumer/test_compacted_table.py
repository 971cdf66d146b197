"""CompactedTable: a dict model under any record sequence; changes and counters."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from krafka.sansio.consumer.compacted_table import CompactedTable, TableChange
from krafka.sansio.consumer.record import ConsumerRecord


def rec(key: bytes | None, value: bytes | None, offset: int = 0) -> ConsumerRecord:
    return ConsumerRecord("t", 0, offset, 0, 0, key, value, (), None)


records = st.lists(
    st.tuples(st.sampled_from([None, b"a", b"b", b"c"]), st.sampled_from([None, b"1", b"2"]))
)


@given(records)
def test_equals_a_dict_model(pairs: list[tuple[bytes | None, bytes | None]]) -> None:
    model: dict[bytes, bytes] = {}
    applied, ingested = CompactedTable(), CompactedTable()
    for key, value in pairs:
        changes = applied.apply([rec(key, value)])
        ingested.ingest([rec(key, value)])
        if key is None:
            assert changes == []
            continue
        old = model.get(key)
        if value is None:
            model.pop(key, None)
            assert changes == ([TableChange(key, old, None)] if old is not None else [])
        else:
            model[key] = value
            assert changes == [TableChange(key, old, value)]
    assert dict(applied) == model == applied.snapshot()
    assert applied == ingested
    assert applied.records_processed == sum(k is not None for k, _ in pairs)
    assert applied.tombstones_processed == sum(k is not None and v is None for k, v in pairs)


def test_change_kinds_copy_and_clear() -> None:
    table = CompactedTable()
    insert, update, delete = table.apply([rec(b"k", b"1"), rec(b"k", b"2"), rec(b"k", None)])
    assert insert.is_insert() and update.is_update() and delete.is_delete()
    table.apply([rec(b"x", b"9")])
    copy = table.copy()
    assert copy == table and copy.records_processed == 4 and b"x" in copy and len(copy) == 1
    table.clear()
    assert len(table) == 0 and table.records_processed == 0 and copy[b"x"] == b"9"
