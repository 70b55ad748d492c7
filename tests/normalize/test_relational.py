"""The relational normalizer reproduces dlt's row shapes, names and order (no Spark needed)."""

from __future__ import annotations

from typing import Any

from lakeload.kernel.normalize.relational import (
    NormalizerSettings,
    RelationalNormalizer,
    RootTableSettings,
    nested_row_id,
)
from lakeload.schema.naming import SnakeCaseNaming


def rows(item: Any, table: str = "t", **settings: Any) -> list[tuple[str, str | None, dict[str, Any]]]:
    normalizer = RelationalNormalizer(NormalizerSettings(load_id="1.5", naming=SnakeCaseNaming(), **settings))
    return list(normalizer.normalize(item, table))


def test_flattening_order_plain_fields_first_then_nested_dicts_last_pushed_first() -> None:
    [(_, _, row)] = rows({"meta": {"a": {"b": 1}, "c": 2}, "id": 1, "x": {"y": 3}, "name": "n"})
    assert list(row) == ["id", "name", "x__y", "meta__c", "meta__a__b", "_dlt_load_id", "_dlt_id"]


def test_child_tables_ids_and_positions() -> None:
    out = rows({"id": 1, "pets": [{"n": "a"}, {"n": "b"}], "tags": ["x"]}, "users")
    assert [(t, p) for t, p, _ in out] == [("users", None), ("users__pets", "users"), ("users__pets", "users"), ("users__tags", "users")]
    root_id = out[0][2]["_dlt_id"]
    pet = out[2][2]
    assert list(pet) == ["n", "_dlt_parent_id", "_dlt_list_idx", "_dlt_id"]
    assert (pet["_dlt_parent_id"], pet["_dlt_list_idx"]) == (root_id, 1)
    assert pet["_dlt_id"] == nested_row_id(root_id, "users__pets", 1)
    assert out[3][2]["value"] == "x"
    assert len(root_id) == 14 and rows({"id": 1}, "users")[0][2]["_dlt_id"] != root_id  # random root ids


def test_lists_of_lists_scalars_and_keys_that_are_paths() -> None:
    out = rows({"matrix": [[1, 2], [3]], "snake__double": 5, "": 1, "Café au lait": 2}, "docs")
    assert [t for t, _, _ in out] == ["docs", "docs__matrix", "docs__matrix__list", "docs__matrix__list", "docs__matrix", "docs__matrix__list"]
    assert list(out[0][2])[:3] == ["snake__double", "_empty", "caf_au_lait"]
    assert [r["value"] for t, _, r in out if t == "docs__matrix__list"] == [1, 2, 3]
    assert rows(7, "scalars")[0][2]["value"] == 7


def test_root_key_propagation_and_key_hash_ids() -> None:
    settings = {"roots": {"users": RootTableSettings(row_id="key_hash", primary_key=("id",), propagate_root_key=True)}}
    first = rows({"id": 1, "pets": [{"n": "a"}]}, "users", **settings)
    again = rows({"id": 1, "pets": [{"n": "b"}]}, "users", **settings)
    assert first[0][2]["_dlt_id"] == again[0][2]["_dlt_id"]  # same key, same id: upserts can match
    assert first[1][2]["_dlt_root_id"] == first[0][2]["_dlt_id"]
    assert list(first[1][2]) == ["n", "_dlt_root_id", "_dlt_parent_id", "_dlt_list_idx", "_dlt_id"]


def test_json_columns_and_max_nesting_keep_values_whole() -> None:
    [(_, _, row)] = rows({"doc": {"a": [1]}, "deep": {"x": {"y": 1}}}, "t", json_columns={"t": frozenset({"doc"})},
                         roots={"t": RootTableSettings(max_nesting=1)})
    assert row["doc"] == {"a": [1]} and row["deep__x"] == {"y": 1}


def test_key_collisions_keep_dlts_last_value_and_are_recorded() -> None:
    normalizer = RelationalNormalizer(NormalizerSettings(load_id="1.5", naming=SnakeCaseNaming()))
    [(_, _, row)] = list(normalizer.normalize({"a b": 1, "a_b": 2, "A_B": 3, "ok": 0}, "t"))
    # dlt keeps the last value silently (data loss); lakeload keeps the same table but records it to warn
    assert row["a_b"] == 3
    assert normalizer.collisions == {"t": {"a_b": ["a b", "a_b", "A_B"]}}
