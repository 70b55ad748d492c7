"""Source-level settings and schema marks side by side with dlt 1.31 (issue 32): `@source(max_table_nesting=...)`
and `mark.materialize_table_schema()`; datasets, stored hints and the schema's normalizer config compared."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
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


SCRIPTS: dict[str, Callable[[Ctx], Any]] = {
    name.removeprefix("s_"): fn for name, fn in globals().items() if name.startswith("s_") and callable(fn)
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_source_settings_as_dlt(name: str, tmp_path: Path) -> None:
    assert_same(SCRIPTS[name], tmp_path, hints=True)
