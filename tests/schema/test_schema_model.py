"""The schema model: dlt's stored shape, content hash, version bumps."""

from __future__ import annotations

from lakeload.schema.schema import Schema


def test_new_schema_has_dlt_system_tables_and_settings() -> None:
    s = Schema("quick_start")
    data = s.to_dict()
    assert list(data) == ["version", "version_hash", "engine_version", "name", "tables", "settings", "normalizers", "previous_hashes"]
    assert list(s.tables) == ["_dlt_version", "_dlt_loads", "_dlt_pipeline_state"]
    assert data["engine_version"] == 11 and data["settings"]["detections"] == ["iso_timestamp"]
    assert s.data_tables() == []


def test_version_bumps_only_on_content_change_and_round_trips() -> None:
    s = Schema("p")
    v0, h0 = s.bump_version()
    assert s.bump_version() == (v0, h0)
    s.update_table({"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint", "nullable": True}}})
    v1, h1 = s.bump_version()
    assert (v1, h1 != h0) == (v0 + 1, True) and s.previous_hashes[0] == h0
    again = Schema.from_json(s.to_json())
    assert again.to_dict() == s.to_dict() and again.content_hash() == h1


def test_update_table_appends_columns_in_order_and_nested_lookup() -> None:
    s = Schema("p")
    s.update_table({"name": "u", "write_disposition": "replace", "columns": {"a": {"name": "a"}}})
    s.update_table({"name": "u", "columns": {"b": {"name": "b", "data_type": "text"}, "a": {"name": "a", "data_type": "bigint"}}})
    s.update_table({"name": "u__c", "parent": "u", "columns": {}})
    s.update_table({"name": "u__c__d", "parent": "u__c", "columns": {}})
    # the hints-only `a` that got a type moves after `b`, as dlt's merge_columns does
    assert list(s.tables["u"]["columns"]) == ["b", "a"] and s.tables["u"]["columns"]["a"]["data_type"] == "bigint"
    assert s.root_table_of("u__c__d")["name"] == "u"
    assert [t["name"] for t in s.nested_tables_of("u")] == ["u", "u__c", "u__c__d"]
