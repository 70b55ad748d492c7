"""A merge strategy a table format does not implement (issue 32, item 13) side by side with dlt 1.31: defining the
resource succeeds, `extract()` and `run()` fail at their extract step with a `PipelineStepFailed` that a user's
`try`/`except` around them catches, and the pipeline then loads the same table with a supported strategy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from compat_harness import Ctx, assert_same

pytestmark = pytest.mark.usefixtures("spark")

ROWS = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
CASES = [("cdc", how) for how in ("decorator", "apply_hints")]  # the strategy both tools lack on Iceberg tables


def step_failed_class(ctx: Ctx) -> type[BaseException]:
    if ctx.is_dlt:
        from dlt.pipeline.exceptions import PipelineStepFailed

        return PipelineStepFailed  # type: ignore[no-any-return]
    return ctx.lib.PipelineStepFailed  # type: ignore[no-any-return]


def items(ctx: Ctx, strategy: str, how: str) -> Any:
    """The resource with `strategy` on an Iceberg table, given by the decorator or by `apply_hints`."""
    disposition = {"disposition": "merge", "strategy": strategy}
    if how == "decorator":
        @ctx.lib.resource(name="items", write_disposition=disposition, primary_key="id", table_format="iceberg")
        def decorated() -> Any:
            yield ROWS

        return decorated()

    @ctx.lib.resource(name="items", primary_key="id")
    def plain() -> Any:
        yield ROWS

    resource = plain()
    resource.apply_hints(write_disposition=disposition, table_format="iceberg")
    return resource


def caught(ctx: Ctx, strategy: str, action: Any) -> Any:
    """What the `except PipelineStepFailed` around `action` saw: the step, and whether it names the table and
    the strategy (None: nothing was raised)."""
    try:
        action()
    except step_failed_class(ctx) as exc:
        text = f"{exc} {exc.__cause__}"
        return {"step": exc.step, "names_table": "items" in text, "names_strategy": f"{strategy}" in text}
    return None


def script(strategy: str, how: str) -> Any:
    def run(ctx: Ctx) -> Any:
        resource = items(ctx, strategy, how)
        ctx.notes["defined"] = True  # reached: defining the resource did not raise
        p = ctx.pipeline()
        ctx.notes["extract"] = caught(ctx, strategy, lambda: p.extract(resource))
        ctx.notes["run"] = caught(ctx, strategy, lambda: p.run(resource))
        resource.apply_hints(write_disposition={"disposition": "merge", "strategy": "upsert"})
        p.run(resource)  # nothing of the refused runs is pending: the supported strategy loads the rows
        return p

    return run


@pytest.mark.parametrize(("strategy", "how"), CASES)
def test_unsupported_merge_strategy_fails_at_extract_as_dlt(strategy: str, how: str, tmp_path: Path) -> None:
    ours = assert_same(script(strategy, how), tmp_path, loads_rows=False)  # (the harness reads no Iceberg rows)
    refused = {"step": "extract", "names_table": True, "names_strategy": True}
    assert ours.notes == {"defined": True, "extract": refused, "run": refused}
