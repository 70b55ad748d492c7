"""The compatibility harness: one dlt script, run by dlt 1.31 and by lakeload side by side, compared.

A *script* is a function of a `Ctx`: it builds resources with ``ctx.lib`` (``dlt`` or ``lakeload``), makes
its pipeline with ``ctx.pipeline(...)`` (same name, dataset and a bucket of its own per tool), runs it as a
dlt user would, and returns the pipeline. Both buckets are then read back with the conformance harness
(tables, columns, types, rows and parent/child links, see ``tests/conformance/harness.py``) and the
pipelines' source state (``state["sources"]``: resource state, incremental cursors) is compared as JSON.

>>> dlt_outcome, ours = run_side_by_side(my_script, tmp_path)
>>> assert_same(my_script, tmp_path)
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import DATASET, canonicalize, diff, isolated_dlt_config, read_bucket

Script = Callable[["Ctx"], Any]


@dataclass
class Ctx:
    """What a script gets: the library under test and where its pipeline keeps data."""

    lib: Any
    bucket: Path
    pipelines_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)  # what the script observed (call counts...), compared too

    @property
    def is_dlt(self) -> bool:
        return self.lib.__name__ == "dlt"

    def pipeline(self, name: str = "compat", **kwargs: Any) -> Any:
        kwargs.setdefault("dataset_name", DATASET)
        return self.lib.pipeline(
            name, destination=self.lib.destinations.filesystem(str(self.bucket)), pipelines_dir=str(self.pipelines_dir),
            **kwargs,
        )


@dataclass
class Outcome:
    """What one tool's run left: the canonical dataset, the source state, and the error it raised, if any."""

    dataset: dict[str, Any] | None
    sources_state: Any
    error: BaseException | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    table_hints: dict[str, Any] = field(default_factory=dict)


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _as_json(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def run_one(lib: Any, script: Script, root: Path, env: dict[str, str] | None = None) -> Outcome:
    """Run `script` with `lib` in `root` (a bucket and a pipelines folder of its own)."""
    ctx = Ctx(lib, root / "bucket", root / "pipelines", dict(env or {}))
    isolation = isolated_dlt_config(root / "dlt_home") if ctx.is_dlt else contextlib.nullcontext()
    with isolation, _env(ctx.env):
        try:
            p = script(ctx)
        except Exception as exc:  # compared by the test: both tools must fail alike
            return Outcome(None, None, exc, ctx.notes)
    dataset = canonicalize(read_bucket(ctx.bucket)) if (ctx.bucket / DATASET / "_dlt_version").is_dir() else None
    state = _as_json(p.state.get("sources", {})) if p is not None else None
    return Outcome(dataset, state, None, _as_json(ctx.notes), table_hints(p) if p is not None else {})


HINT_KEYS_IGNORED = ("columns", "x-normalizer", "name")


def table_hints(p: Any) -> dict[str, Any]:
    """The hints of the default schema's data tables: table keys, and each column's hints (types included)."""
    tables = p.default_schema.tables if p.default_schema_name else {}
    found: dict[str, Any] = {}
    for name, table in tables.items():
        if name.startswith("_dlt"):
            continue
        hints = {k: v for k, v in table.items() if k not in HINT_KEYS_IGNORED}
        hints["columns"] = {c: {k: v for k, v in col.items() if k != "name"} for c, col in table.get("columns", {}).items()}
        found[name] = _as_json(hints)
    return found


def run_side_by_side(script: Script, tmp_path: Path, env: dict[str, str] | None = None) -> tuple[Outcome, Outcome]:
    import dlt

    import lakeload

    return run_one(dlt, script, tmp_path / "dlt", env), run_one(lakeload, script, tmp_path / "lakeload", env)


def assert_same(
    script: Script, tmp_path: Path, *, state: bool = True, hints: bool = False, env: dict[str, str] | None = None
) -> Outcome:
    """Both tools succeed (or both fail) and leave the same tables, rows, (with `state`) source state and (with
    `hints`) table and column hints in the stored schema."""
    theirs, ours = run_side_by_side(script, tmp_path, env)
    if theirs.error is not None or ours.error is not None:
        assert theirs.error is not None and ours.error is not None, (
            f"dlt: {theirs.error!r}\nlakeload: {ours.error!r}"
        )
        return ours
    assert theirs.dataset is not None and ours.dataset is not None
    assert diff(theirs.dataset, ours.dataset) == []
    if state:
        assert ours.sources_state == theirs.sources_state
    assert ours.notes == theirs.notes
    if hints:
        assert ours.table_hints == theirs.table_hints
    return ours
