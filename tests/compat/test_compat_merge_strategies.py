"""A merge strategy a table format does not implement (issue 32, item 13) side by side with dlt 1.31: defining the
resource succeeds, `extract()` and `run()` fail at their extract step with a `PipelineStepFailed` that a user's
`try`/`except` around them catches, and the pipeline then loads the same table with a supported strategy.

lakeload's Delta and Iceberg formats have every strategy dlt names, so lakeload's side is a table format of this
test that has `upsert` only (`tests/destinations/test_table_formats.py`'s); dlt's side is `scd2` on a Delta table,
which dlt's filesystem destination refuses."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.usefixtures("spark")

ROWS = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "destinations"))


@pytest.fixture
def upsert_only() -> Iterator[str]:
    from test_table_formats import UpsertOnlyFormat

    from lakeload.destinations.impl.filesystem.table_format import TABLE_FORMATS, register_table_format

    register_table_format(UpsertOnlyFormat())
    yield UpsertOnlyFormat.name
    TABLE_FORMATS.pop(UpsertOnlyFormat.name)


def items(lib: Any, table_format: str, how: str) -> Any:
    """The resource with `scd2` on a table of `table_format`, given by the decorator or by `apply_hints`."""
    disposition = {"disposition": "merge", "strategy": "scd2"}
    if how == "decorator":
        @lib.resource(name="items", write_disposition=disposition, primary_key="id", table_format=table_format)
        def decorated() -> Any:
            yield ROWS

        return decorated()

    @lib.resource(name="items", primary_key="id")
    def plain() -> Any:
        yield ROWS

    resource = plain()
    resource.apply_hints(write_disposition=disposition, table_format=table_format)
    return resource


def caught(step_failed: type[BaseException], action: Any) -> Any:
    """What the `except PipelineStepFailed` around `action` saw (None: nothing was raised)."""
    try:
        action()
    except step_failed as exc:
        text = f"{exc} {exc.__cause__}"
        return {"step": getattr(exc, "step", None), "names_table": "items" in text, "names_strategy": "scd2" in text}
    return None


def notes(lib: Any, step_failed: type[BaseException], table_format: str, how: str, folder: Path) -> dict[str, Any]:
    resource = items(lib, table_format, how)
    p = lib.pipeline("refusal", destination=lib.destinations.filesystem(str(folder / "bucket")), dataset_name="ds",
                     pipelines_dir=str(folder / "pipelines"))
    seen = {"extract": caught(step_failed, lambda: p.extract(resource)), "run": caught(step_failed, lambda: p.run(resource))}
    resource.apply_hints(write_disposition={"disposition": "merge", "strategy": "upsert"})
    info = p.run(resource)  # nothing of the refused runs is pending: the supported strategy loads the rows
    seen["loaded"] = not info.has_failed_jobs and not p.list_normalized_load_packages()
    return seen


@pytest.mark.parametrize("how", ["decorator", "apply_hints"])
def test_unsupported_merge_strategy_fails_at_extract_as_dlt(how: str, tmp_path: Path, upsert_only: str) -> None:
    import dlt
    from dlt.pipeline.exceptions import PipelineStepFailed

    import lakeload

    theirs = notes(dlt, PipelineStepFailed, "delta", how, tmp_path / "dlt")
    ours = notes(lakeload, lakeload.PipelineStepFailed, upsert_only, how, tmp_path / "lakeload")
    refused = {"step": "extract", "names_table": True, "names_strategy": True}
    assert ours == theirs == {"extract": refused, "run": refused, "loaded": True}
