"""Extract's file rotation by dlt's `[data_writer]` settings, side by side with dlt 1.31: the same script runs with
each, under the same environment variables, and the extracted files per table (the package's `new_jobs`) and the
rows that reach the destination are compared. dlt's own `_dlt_pipeline_state` job is left out (lakeload keeps the
state in the package manifest)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dlt
import pytest

import lakeload

ITEMS = 50


def make_data(lib: Any, kind: str) -> Any:
    """A `@source` in section `sec`, a standalone resource of this module, or one yielding pages of 10 items."""

    @lib.source(section="sec")
    def shop() -> Any:
        @lib.resource(name="orders")
        def orders() -> Any:
            for i in range(ITEMS):
                yield {"id": i, "note": "x" * 20}

        return orders

    @lib.resource(name="loose")
    def loose() -> Any:
        for i in range(ITEMS):
            yield {"id": i}

    @lib.resource(name="paged")
    def paged() -> Any:
        for page in range(ITEMS // 10):
            yield [{"id": page * 10 + i} for i in range(10)]

    return {"source": shop, "loose": loose, "paged": paged}[kind]()


def extracted_files(lib: Any, root: Path, kind: str) -> dict[str, int]:
    """Extracted files per data table after `extract()` of `kind`."""
    pipeline = lib.pipeline("rotation", destination=lib.destinations.filesystem(str(root / "bucket")),
                            pipelines_dir=str(root / "pipelines"), dataset_name="ds")
    pipeline.extract(make_data(lib, kind), loader_file_format="jsonl")
    (load_id,) = pipeline.list_extracted_load_packages()
    tables = [job.job_file_info.table_name for job in pipeline.get_load_package_info(load_id).jobs["new_jobs"]]
    return {table: tables.count(table) for table in set(tables) if not table.startswith("_dlt")}


def side_by_side(tmp_path: Path, kind: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return extracted_files(dlt, tmp_path / "dlt", kind), extracted_files(lakeload, tmp_path / "lakeload", kind)


MODULE = __name__.rsplit(".", 1)[-1].upper()  # a standalone resource's section: its module's name

CASES = [
    ("source", {}, {"orders": 1}),
    ("source", {"DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"orders": 5}),
    ("source", {"SOURCES__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"orders": 5}),
    ("source", {"SOURCES__SEC__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"orders": 5}),
    ("source", {"SOURCES__SHOP__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"orders": 5}),  # dlt's compact layout
    ("source", {"SOURCES__SEC__SHOP__DATA_WRITER__FILE_MAX_ITEMS": "25"}, {"orders": 2}),
    ("source", {"ROTATION__SOURCES__SEC__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"orders": 5}),  # pipeline-scoped
    ("source", {"SOURCES__SEC__DATA_WRITER__FILE_MAX_ITEMS": "10", "DATA_WRITER__FILE_MAX_ITEMS": "25"}, {"orders": 5}),
    # not read by dlt's extract: [extract.data_writer], a resource's own section, normalize's
    ("source", {"EXTRACT__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"orders": 1}),
    ("source", {"SOURCES__SEC__SHOP__ORDERS__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"orders": 1}),
    ("source", {"NORMALIZE__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"orders": 1}),
    ("loose", {f"SOURCES__{MODULE}__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"loose": 5}),
    ("loose", {"SOURCES__ROTATION__DATA_WRITER__FILE_MAX_ITEMS": "10"}, {"loose": 5}),  # the source is the schema's
    ("loose", {"DATA_WRITER__FILE_MAX_ITEMS": "10", "DATA_WRITER__BUFFER_MAX_ITEMS": "3"}, {"loose": 5}),  # 12 a file
    ("loose", {"DATA_WRITER__FILE_MAX_ITEMS": "20", "DATA_WRITER__BUFFER_MAX_ITEMS": "7"}, {"loose": 3}),  # 21 a file
    ("paged", {"DATA_WRITER__FILE_MAX_ITEMS": "15"}, {"paged": 3}),  # a page stays whole: 20, 20, 10
    ("paged", {"DATA_WRITER__FILE_MAX_ITEMS": "10", "DATA_WRITER__BUFFER_MAX_ITEMS": "3"}, {"paged": 5}),
    ("loose", {"DATA_WRITER__FILE_MAX_BYTES": "200"}, {"loose": 1}),  # checked per buffer of 5,000 items, as dlt
    ("loose", {"DATA_WRITER__FILE_MAX_BYTES": "200", "DATA_WRITER__BUFFER_MAX_ITEMS": "20"}, {"loose": 2}),
]


@pytest.mark.parametrize(("kind", "env", "expected"), CASES, ids=[f"{k}-{'-'.join(e) or 'none'}" for k, e, _ in CASES])
def test_extracted_files_per_table_as_dlt(
    kind: str, env: dict[str, str], expected: dict[str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    dlt_files, lakeload_files = side_by_side(tmp_path, kind, env, monkeypatch)
    assert dlt_files == expected  # the oracle, as this table says
    assert lakeload_files == dlt_files


@contextlib.contextmanager
def dlt_project_here() -> Iterator[None]:
    """dlt reads `./.dlt/*.toml` of the test's folder (its run context is made once per process otherwise)."""
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext
    from dlt.common.runtime.run_context import RunContext

    pluggable = Container()[PluggableRunContext]
    cookie = pluggable.push_context()
    try:
        pluggable.reload(RunContext(os.getcwd()))
        yield
    finally:
        pluggable.pop_context(cookie)


def test_toml_section_of_a_source_as_dlt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dlt docs' layout: `[sources.<section>.data_writer]` in `.dlt/config.toml` (lakeload reads `.dlt/` too)."""
    os.makedirs(".dlt")
    Path(".dlt/config.toml").write_text("[sources.sec.data_writer]\nfile_max_items = 20\n")
    with dlt_project_here():
        dlt_files, lakeload_files = side_by_side(tmp_path, "source", {}, monkeypatch)
    assert lakeload_files == dlt_files == {"orders": 3}


def test_invalid_limit_names_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCES__SEC__DATA_WRITER__FILE_MAX_ITEMS", "-5")
    with pytest.raises(lakeload.LakeloadError, match="data_writer.file_max_items must be a positive integer"):
        extracted_files(lakeload, tmp_path, "source")
