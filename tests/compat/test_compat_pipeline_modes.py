"""Pipeline modes (issue 14, group 9) against dlt 1.31: dev_mode, refresh=, sync_schema, Schema objects, root_key.

Each script runs a pipeline with `ctx.lib` (`dlt` or `lakeload`) and returns it; the harness compares its dataset
(conformance harness: tables, columns, types, rows with parent/child links; Delta tables through delta-rs), source
state and stored hints; the bucket's layout (data files per table, Delta log lengths, schema files and tables) and
what the script read back are compared as notes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from _harness_pipeline_modes import bucket_layout
from compat_harness import Ctx, Script, assert_same

pytestmark = pytest.mark.usefixtures("spark")


def _pipeline(ctx: Ctx, **kwargs: Any) -> Any:
    return ctx.pipeline("modes", **kwargs)


def _shop(lib: Any, n: int, table_format: str | None = None) -> Any:
    @lib.source(name="shop")
    def shop() -> Any:
        @lib.resource(write_disposition="append", table_format=table_format)
        def customers() -> Any:
            state = lib.current.resource_state()
            start = state.get("last_id", 0)
            state["last_id"] = start + 2
            yield from [{"id": start + i, "tags": [{"tag": f"t{n}"}]} for i in (1, 2)]

        @lib.resource(write_disposition="replace")
        def products() -> Any:
            yield {"sku": n}

        return customers, products

    return shop()


def _view(ctx: Ctx, p: Any, **read_back: Any) -> Any:
    """Note the bucket's layout and what the script read back; the pipeline is returned to the harness."""
    ctx.notes.update(bucket_layout(ctx.bucket / p.dataset_name), **read_back)
    return p


def s_dev_mode(ctx: Ctx) -> Any:
    p = _pipeline(ctx, dev_mode=True, dataset_name="shop_data")
    p.run(_shop(ctx.lib, 1))
    stamped = re.sub(r"\d{14}$", "<stamp>", p.dataset_name)
    return _view(ctx, p, dataset=stamped, dev_mode=p.dev_mode)


def s_dev_mode_twice(ctx: Ctx) -> Any:
    _pipeline(ctx).run(_shop(ctx.lib, 1))
    p = _pipeline(ctx, dev_mode=True)
    p.run(_shop(ctx.lib, 2))  # a fresh instance: the cursor starts again, in a dataset of its own
    return _view(ctx, p)


def _refresh_twice(mode: str, table_format: str | None = None) -> Script:
    def script(ctx: Ctx) -> Any:
        p = _pipeline(ctx)
        p.run(_shop(ctx.lib, 1, table_format))
        p.run(_shop(ctx.lib, 2, table_format).with_resources("customers"), refresh=mode)
        return _view(ctx, p)

    script.__name__ = f"s_refresh_{mode}" + (f"_{table_format}" if table_format else "")
    return script


def s_refresh_extract_then_load(ctx: Ctx) -> Any:
    p = _pipeline(ctx)
    p.run(_shop(ctx.lib, 1))
    p.extract(_shop(ctx.lib, 2), refresh="drop_sources")
    p.normalize()
    p.load()
    return _view(ctx, p)


def s_pipeline_refresh(ctx: Ctx) -> Any:
    p = _pipeline(ctx, refresh="drop_resources")
    for n in (1, 2, 3):
        p.run(_shop(ctx.lib, n))
    return _view(ctx, p, refresh=p.refresh)


def s_sync_schema(ctx: Ctx) -> Any:
    p = _pipeline(ctx)
    p.extract(_shop(ctx.lib, 1))
    p.normalize()
    p.sync_schema()
    p.load()
    return _view(ctx, p)


def s_schema_object(ctx: Ctx) -> Any:
    schema = ctx.lib.Schema("catalog")
    p = _pipeline(ctx)
    p.run([{"id": 1, "name": "a"}], table_name="items", schema=schema)
    return _view(ctx, p, schemas=p.schema_names, tables=p.default_schema.data_table_names())


def s_source_root_key(ctx: Ctx) -> Any:
    @ctx.lib.source(root_key=True)
    def nested() -> Any:
        return ctx.lib.resource([{"id": 1, "a": [{"b": [{"c": 1}]}]}], name="deep")

    p = _pipeline(ctx)
    p.run(nested(), loader_file_format="parquet")
    return _view(ctx, p, columns=list(p.default_schema.get_table_columns("deep__a__b")))


SCRIPTS: list[Any] = [
    s_dev_mode, s_dev_mode_twice, _refresh_twice("drop_sources"), _refresh_twice("drop_resources"),
    _refresh_twice("drop_data"), s_refresh_extract_then_load, s_pipeline_refresh, s_sync_schema, s_schema_object,
    s_source_root_key, _refresh_twice("drop_data", "delta"),
]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.__name__[2:])
def test_pipeline_modes_as_dlt(script: Script, tmp_path: Path) -> None:
    assert_same(script, tmp_path, hints=True)
