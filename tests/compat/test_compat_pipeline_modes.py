"""Pipeline modes (issue 14, group 9) against dlt 1.31: dev_mode, refresh=, sync_schema, Schema objects, root_key.

Each script gets the library (`dlt` or `lakeload`) and a folder, runs a pipeline there and returns what it did;
the test compares rows per table (without dlt's id columns), file counts, stored schemas and state.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _harness_pipeline_modes import bucket_view

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def _pipeline(lib: Any, root: Path, **kwargs: Any) -> Any:
    kwargs.setdefault("dataset_name", "ds")
    return lib.pipeline("modes", destination=lib.destinations.filesystem(str(root / "bucket")),
                        pipelines_dir=str(root / "pipelines"), **kwargs)


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


def _view(p: Any, root: Path, dataset: str = "ds") -> dict[str, Any]:
    return bucket_view(root / "bucket" / dataset) | {"state": p.state.get("sources")}


def s_dev_mode(lib: Any, root: Path) -> dict[str, Any]:
    p = _pipeline(lib, root, dev_mode=True, dataset_name="shop_data")
    p.run(_shop(lib, 1))
    stamped = re.sub(r"\d{14}$", "<stamp>", p.dataset_name)
    return _view(p, root, p.dataset_name) | {"dataset": stamped, "dev_mode": p.dev_mode}


def s_dev_mode_twice(lib: Any, root: Path) -> dict[str, Any]:
    _pipeline(lib, root).run(_shop(lib, 1))
    p = _pipeline(lib, root, dev_mode=True)
    p.run(_shop(lib, 2))  # a fresh instance: the cursor starts again, in a dataset of its own
    return _view(p, root, p.dataset_name)


def _refresh_twice(mode: str, table_format: str | None = None) -> Callable[[Any, Path], dict[str, Any]]:
    def script(lib: Any, root: Path) -> dict[str, Any]:
        p = _pipeline(lib, root)
        p.run(_shop(lib, 1, table_format))
        p.run(_shop(lib, 2, table_format).with_resources("customers"), refresh=mode)
        return _view(p, root)

    script.__name__ = f"s_refresh_{mode}" + (f"_{table_format}" if table_format else "")
    return script


def s_refresh_extract_then_load(lib: Any, root: Path) -> dict[str, Any]:
    p = _pipeline(lib, root)
    p.run(_shop(lib, 1))
    p.extract(_shop(lib, 2), refresh="drop_sources")
    p.normalize()
    p.load()
    return _view(p, root)


def s_pipeline_refresh(lib: Any, root: Path) -> dict[str, Any]:
    p = _pipeline(lib, root, refresh="drop_resources")
    for n in (1, 2, 3):
        p.run(_shop(lib, n))
    return _view(p, root) | {"refresh": p.refresh}


def s_sync_schema(lib: Any, root: Path) -> dict[str, Any]:
    p = _pipeline(lib, root)
    p.extract(_shop(lib, 1))
    p.normalize()
    p.sync_schema()
    p.load()
    return _view(p, root)


def s_schema_object(lib: Any, root: Path) -> dict[str, Any]:
    schema = lib.Schema("catalog")
    p = _pipeline(lib, root)
    p.run([{"id": 1, "name": "a"}], table_name="items", schema=schema)
    return _view(p, root) | {"schemas": p.schema_names, "tables": p.default_schema.data_table_names()}


def s_source_root_key(lib: Any, root: Path) -> dict[str, Any]:
    @lib.source(root_key=True)
    def nested() -> Any:
        return lib.resource([{"id": 1, "a": [{"b": [{"c": 1}]}]}], name="deep")

    p = _pipeline(lib, root)
    p.run(nested(), loader_file_format="parquet")
    return _view(p, root) | {"columns": list(p.default_schema.get_table_columns("deep__a__b"))}


SCRIPTS: list[Any] = [
    s_dev_mode, s_dev_mode_twice, _refresh_twice("drop_sources"), _refresh_twice("drop_resources"),
    _refresh_twice("drop_data"), s_refresh_extract_then_load, s_pipeline_refresh, s_sync_schema, s_schema_object,
    s_source_root_key, _refresh_twice("drop_data", "delta"),
]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.__name__[2:])
def test_pipeline_modes_as_dlt(script: Callable[[Any, Path], dict[str, Any]], tmp_path: Path) -> None:
    import dlt

    theirs = script(dlt, tmp_path / "dlt")
    ours = script(lakeload, tmp_path / "lakeload")
    assert ours == theirs
    assert ours["rows"]  # every script loads something
