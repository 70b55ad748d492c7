"""Driver-side key helpers of the Delta merge: file pruning by key statistics, root-id completeness, byte sizes."""

from __future__ import annotations

from lakeload.delta.merge_keys import all_have_root_ids, byte_size, may_hold_keys


def test_multi_column_keys_prune_files_whose_range_of_any_key_column_misses() -> None:
    stats = {"min.id": 1, "max.id": 9, "min.kind": "a", "max.kind": "c"}
    assert may_hold_keys(stats, {"id": (5, 20), "kind": ("b", "f")})
    assert not may_hold_keys(stats, {"id": (5, 20), "kind": ("d", "f")})  # id overlaps, kind does not
    assert not may_hold_keys(stats, {"id": (10, 20), "kind": ("a", "c")})
    assert may_hold_keys({"min.id": 1, "max.id": 9}, {"id": (5, 20), "kind": ("d", "f")})  # no stats: kept
    assert may_hold_keys(stats, {"id": (None, None), "kind": ("d", "f")}) is False
    assert may_hold_keys({"min.at": "2024", "max.at": "2025"}, {"at": (1, 2)})  # incomparable: kept


def test_root_ids_are_complete_only_when_every_file_counts_no_null() -> None:
    complete = [{"stats": {"null_count._dlt_root_id": 0}}, {"stats": {"null_count._dlt_root_id": 0}}]
    assert all_have_root_ids(complete, {"_dlt_root_id", "_dlt_id"})
    assert not all_have_root_ids(complete, {"_dlt_id"})
    assert not all_have_root_ids([*complete, {"stats": {"null_count._dlt_root_id": 2}}], {"_dlt_root_id"})
    assert not all_have_root_ids([*complete, {"stats": {}}], {"_dlt_root_id"})  # a file without statistics


def test_byte_sizes_as_spark_writes_them() -> None:
    assert byte_size("10485760") == 10 * 1024**2
    assert byte_size("10MB") == byte_size("10m") == 10 * 1024**2
    assert byte_size("-1") == -1
