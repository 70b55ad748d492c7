"""Source-level settings and schema marks side by side with dlt 1.31 (issue 32): `@source(max_table_nesting=...)`
and `mark.materialize_table_schema()`; datasets, stored hints and the schema's normalizer config compared."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from compat_dataset import DATASET
from compat_harness import Ctx, assert_same

pytestmark = pytest.mark.usefixtures("spark")

DEEP = [{"id": 1, "a": [{"b": [{"c": [{"d": 1}]}]}]}, {"id": 2, "a": [{"b": []}]}]


def deep_resource(ctx: Ctx, name: str, **hints: Any) -> Any:
    @ctx.lib.resource(name=name, **hints)
    def generate() -> Any:
        yield DEEP

    return generate


def note_normalizers(ctx: Ctx, p: Any, label: str) -> None:
    """The schema's JSON normalizer config, where dlt keeps a source's `max_table_nesting`."""
    ctx.notes[label] = p.default_schema.to_dict()["normalizers"]["json"].get("config")


def s_source_max_table_nesting(ctx: Ctx) -> Any:
    """The source's limit applies to its resources without their own; a resource's own limit wins."""

    @ctx.lib.source(name="deep", max_table_nesting=1)
    def deep() -> Any:
        return deep_resource(ctx, "plain")(), deep_resource(ctx, "own", max_table_nesting=2)()

    p = ctx.pipeline()
    ctx.run(p, deep())
    note_normalizers(ctx, p, "after the limited source")
    return p


def s_source_max_table_nesting_removed(ctx: Ctx) -> Any:
    """A later run of a source without the limit removes it from the schema (new tables nest fully again)."""

    @ctx.lib.source(name="deep", max_table_nesting=0)
    def limited() -> Any:
        return deep_resource(ctx, "first")

    @ctx.lib.source(name="deep")
    def unlimited() -> Any:
        return deep_resource(ctx, "second")

    p = ctx.pipeline()
    ctx.run(p, limited())
    note_normalizers(ctx, p, "limited")
    ctx.run(p, unlimited())
    note_normalizers(ctx, p, "unlimited")
    return p


def s_source_max_table_nesting_set_on_instance(ctx: Ctx) -> Any:
    """`source.max_table_nesting = n` on a source object, as dlt's property setter."""

    @ctx.lib.source(name="deep")
    def deep() -> Any:
        return deep_resource(ctx, "plain")

    src = deep()
    src.max_table_nesting = 2
    p = ctx.pipeline()
    ctx.run(p, src)
    note_normalizers(ctx, p, "after")
    return p


def s_materialize_table_schema(ctx: Ctx) -> Any:
    """A resource that yields only `mark.materialize_table_schema()` creates its (empty) table, hinted columns
    included, beside one with rows."""

    @ctx.lib.resource(columns={"id": {"data_type": "bigint"}, "name": {"data_type": "text"}})
    def hinted() -> Any:
        yield ctx.lib.mark.materialize_table_schema()

    @ctx.lib.resource
    def unhinted() -> Any:
        yield ctx.lib.mark.materialize_table_schema()

    @ctx.lib.resource
    def rows() -> Any:
        yield [{"id": 1}]

    p = ctx.pipeline()
    ctx.run(p, [hinted(), unhinted(), rows()])
    ctx.notes["tables"] = sorted(p.default_schema.data_table_names())
    return p


SCRIPTS: dict[str, Callable[[Ctx], Any]] = {
    name.removeprefix("s_"): fn for name, fn in globals().items() if name.startswith("s_") and callable(fn)
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_source_settings_as_dlt(name: str, tmp_path: Path) -> None:
    assert_same(SCRIPTS[name], tmp_path, hints=True)


@pytest.mark.parametrize("loader_file_format", ["jsonl", "parquet"])
def test_materialized_table_files_as_dlt(loader_file_format: str, tmp_path: Path) -> None:
    """The files of a materialized table: one empty file per table in the bucket, as dlt's filesystem writes."""
    outcomes = {lib_name: _materialized_files(__import__(lib_name), tmp_path / lib_name, loader_file_format)
                for lib_name in ("dlt", "lakeload")}
    assert outcomes["lakeload"] == outcomes["dlt"] != []


def _materialized_files(lib: Any, root: Path, loader_file_format: str) -> list[tuple[str, int]]:
    """(last suffix, rows) of each file of a table materialized without rows."""
    ctx = Ctx(lib, root / "bucket", root / "pipelines")

    @lib.resource(columns={"id": {"data_type": "bigint"}})
    def hinted() -> Any:
        yield lib.mark.materialize_table_schema()

    ctx.pipeline().run(hinted(), loader_file_format=loader_file_format)
    folder = ctx.bucket / DATASET / "hinted"
    return [(f.suffixes[-1], _rows(f)) for f in folder.iterdir()] if folder.exists() else []


def _rows(path: Path) -> int:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).num_rows
    import gzip

    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return len(data.splitlines())
