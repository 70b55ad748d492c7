"""refresh= (drop_sources, drop_resources, drop_data) against dlt 1.31: the same two runs, the same bucket."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from compat._harness_pipeline_modes import bucket_view

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def crm(lib: Any, n: int, table_format: str | None) -> Any:
    @lib.source(name="crm")
    def source() -> Any:
        @lib.resource(write_disposition="append", table_format=table_format)
        def users() -> Any:
            lib.current.resource_state()["n"] = lib.current.resource_state().get("n", 0) + n
            lib.current.source_state()["runs"] = lib.current.source_state().get("runs", 0) + 1
            yield from [{"id": n * 10 + i, "pets": [{"name": f"pet{n}{i}"}]} for i in range(2)]

        @lib.resource(write_disposition="append", table_format=table_format)
        def orders() -> Any:
            lib.current.resource_state()["seen"] = n
            yield {"order_id": n}

        return users, orders

    return source()


def two_runs(lib: Any, root: Path, mode: str, table_format: str | None, fmt: str | None) -> dict[str, Any]:
    p = lib.pipeline("refresh", destination=lib.destinations.filesystem(str(root / "bucket")), dataset_name="ds",
                     pipelines_dir=str(root / "pipelines"))
    p.run(crm(lib, 1, table_format), loader_file_format=fmt)
    p.run(crm(lib, 2, table_format).with_resources("users"), refresh=mode, loader_file_format=fmt)
    view = bucket_view(root / "bucket" / "ds")
    view["state"] = p.state["sources"]
    view["local_tables"] = sorted(t["name"] for t in p.default_schema.data_tables())
    return view


# JSONL files with each mode: tests/compat/test_pipeline_modes.py
CASES = [
    ("drop_resources", None, "parquet"),
    ("drop_sources", "delta", None),
    ("drop_data", "delta", None),
    ("drop_resources", "delta", None),
]


@pytest.mark.parametrize(("mode", "table_format", "fmt"), CASES)
def test_refresh_leaves_the_bucket_as_dlt(mode: str, table_format: str | None, fmt: str | None, tmp_path: Path) -> None:
    import dlt

    theirs = two_runs(dlt, tmp_path / "dlt", mode, table_format, fmt)
    ours = two_runs(lakeload, tmp_path / "lakeload", mode, table_format, fmt)
    assert ours == theirs
    if mode != "drop_data":  # the tables of run 1 are gone, the rows of run 2 only
        assert ours["rows"]["users"] == ['{"id": 20}', '{"id": 21}']


def test_pipeline_refresh_applies_on_every_run(tmp_path: Path) -> None:
    views = {}
    for lib in (__import__("dlt"), lakeload):
        root = tmp_path / lib.__name__
        p = lib.pipeline("every", destination=lib.destinations.filesystem(str(root / "bucket")), dataset_name="ds",
                         pipelines_dir=str(root / "pipelines"), refresh="drop_data")
        for n in (1, 2, 3):
            p.run(crm(lib, n, None))
        views[lib.__name__] = bucket_view(root / "bucket" / "ds") | {"state": p.state["sources"], "refresh": p.refresh}
    assert views["lakeload"] == views["dlt"]
    assert views["lakeload"]["rows"]["orders"] == ['{"order_id": 3}']


def test_a_failed_extract_changes_nothing(tmp_path: Path) -> None:
    p = lakeload.pipeline("failing", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"))
    p.run(crm(lakeload, 1, None))
    before, state = bucket_view(tmp_path / "bucket" / "ds"), p.state["sources"]

    @lakeload.resource(name="users")
    def broken() -> Any:
        yield {"id": 99}
        raise RuntimeError("source went away")

    with pytest.raises(lakeload.PipelineStepFailed, match="source went away"):
        p.run(broken(), schema="crm", refresh="drop_sources")
    assert bucket_view(tmp_path / "bucket" / "ds") == before
    assert p.state["sources"] == state and "orders" in p.default_schema.tables


def test_the_drop_happens_at_load(tmp_path: Path) -> None:
    """Extracted and normalized, the refresh waits in the package: the bucket changes only when it loads."""
    p = lakeload.pipeline("at_load", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"))
    p.run(crm(lakeload, 1, None))
    before = bucket_view(tmp_path / "bucket" / "ds")
    load_id = p.extract(crm(lakeload, 2, None), refresh="drop_sources").loads_ids[0]
    p.normalize()
    assert bucket_view(tmp_path / "bucket" / "ds") == before
    assert p.get_load_package_info(load_id).state == "normalized"
    p.load()
    after = bucket_view(tmp_path / "bucket" / "ds")
    assert after["rows"]["orders"] == ['{"order_id": 2}'] and after["schema_files"] == 1


def test_an_unknown_refresh_mode_names_the_modes(tmp_path: Path) -> None:
    with pytest.raises(lakeload.LakeloadError, match="drop_sources"):
        lakeload.pipeline("bad", pipelines_dir=str(tmp_path), refresh="drop_everything")


def test_a_reloaded_delta_truncate_does_not_empty_the_table_again(tmp_path: Path) -> None:
    """A load that dies after the truncate commit runs it again: the commit's transaction makes it a no-op."""
    import os

    from lakeload.load.refresh import DONE_MARKER, RefreshLoad
    from lakeload.schema.schema import Schema
    from lakeload.storage.packages import LOADED, read_json

    p = lakeload.pipeline("delta_again", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                          dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"))
    p.run(crm(lakeload, 1, "delta"))
    load_id = p.extract(crm(lakeload, 2, "delta").with_resources("users"), refresh="drop_data").loads_ids[0]
    p.normalize()
    p.load()
    after = bucket_view(tmp_path / "bucket" / "ds")
    package_dir = p.storage.package_dir(LOADED, load_id)
    package = read_json(os.path.join(package_dir, "package.json"))
    os.remove(os.path.join(package_dir, DONE_MARKER))  # as if the process died before the marker was written
    RefreshLoad(p._settings.client(), p._settings.layout(p._settings.configuration()), p.pipeline_name).apply(
        Schema.from_dict(package["schema"]), package, package_dir)
    assert bucket_view(tmp_path / "bucket" / "ds") == after
    assert after["rows"]["users"] == ['{"id": 20}', '{"id": 21}'] and after["delta_log"]["users"] == 3
