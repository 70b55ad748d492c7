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


def test_content_hash_is_dlts_version_hash_and_column_order_counts() -> None:
    from dlt.common.schema.utils import generate_version_hash

    s = Schema("p")
    s.update_table({"name": "users", "write_disposition": "merge", "x-normalizer": {"seen-data": True},
                    "columns": {"id": {"name": "id", "data_type": "bigint", "nullable": False, "primary_key": True},
                                "name": {"name": "name", "data_type": "text", "nullable": True}}})
    s.bump_version()
    assert s.content_hash() == generate_version_hash(s.to_dict()) == s.version_hash
    swapped = Schema.from_dict(s.to_dict())
    swapped.tables["users"]["columns"] = dict(reversed(list(s.tables["users"]["columns"].items())))
    assert swapped.content_hash() == generate_version_hash(swapped.to_dict()) != s.content_hash()


def test_stored_schemas_name_dlts_json_normalizer_also_when_read_from_an_older_lakeload() -> None:
    old = Schema("p").to_dict()
    old["normalizers"] = {"names": "snake_case", "json": {"module": "lakeload.normalize.relational"}}
    assert Schema.from_dict(old).to_dict()["normalizers"]["json"]["module"] == "dlt.common.normalizers.json.relational"
    assert Schema.from_dict({**old, "normalizers": {"names": "snake_case"}}).normalizers["json"]["module"] == (
        "dlt.common.normalizers.json.relational")
