"""The compatibility harness: one dlt script, run by dlt 1.31 and by lakeload side by side, compared.

A *script* is a function of a `Ctx`: it builds resources with ``ctx.lib`` (``dlt`` or ``lakeload``), makes
its pipeline with ``ctx.pipeline(...)`` (same name, dataset and a bucket of its own per tool), runs it as a
dlt user would, and returns the pipeline. What is compared, dlt being the oracle:

* after every ``ctx.run(...)``/``ctx.checkpoint(...)`` and at the end: the dataset read back with the
  conformance harness (``tests/conformance/harness.py``: tables, columns and their order, dlt data types,
  column hints, write disposition, rows with their parent/child links, ``_dlt_loads``; Delta tables through
  delta-rs, see ``compat_dataset.py``) and the pipeline's source state (``state["sources"]``: resource state,
  incremental cursors and their hashes);
* the failure of each step (``ctx.run`` catches it) and of the whole script: by error class, or by what a
  script-specific ``signature`` reads from the error (the contract a contract violation names...);
* what the script noted in ``ctx.notes`` (call counts, properties read back...);
* with ``hints=True``, every table and column hint of the stored schema; with ``contracts=True``, the schema
  contract settings it stores.

>>> outcome = assert_same(my_script, tmp_path, hints=True)
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

for _dir in (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "conformance"):
    if str(_dir) not in sys.path:  # importable as `compat.compat_harness` from other test folders too
        sys.path.insert(0, str(_dir))

from compat_dataset import (  # noqa: E402
    DATASET,
    as_json,
    comparable_state,
    drop_arrow_ids,
    read_dataset,
    schema_contracts,
)
from harness import diff, isolated_dlt_config  # noqa: E402

Script = Callable[["Ctx"], Any]
Signature = Callable[[BaseException], Any]


def error_class(exc: BaseException) -> str:
    """The default failure signature: the class name of the step's cause (``PipelineStepFailed`` unwrapped)."""
    return type(exc.__cause__ or exc).__name__


def _chain_text(exc: BaseException) -> str:
    texts, seen = [], exc
    while seen is not None:
        texts.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return "\n".join(texts)


def step_failure(*phrases: str) -> Signature:
    """A signature for failures whose classes are each tool's own (lakeload's errors are `LakeloadError`s, never
    dlt's classes): the pipeline step that failed, and which of `phrases` the error chain says (a test should
    check that it says them all, so that two unrelated failures do not compare equal)."""

    def signature(exc: BaseException) -> Any:
        text = _chain_text(exc)
        return {"step": getattr(exc, "step", None),
                "step_failed": any(c.__name__ == "PipelineStepFailed" for c in type(exc).__mro__),
                "says": [phrase for phrase in phrases if phrase in text]}

    return signature


@dataclass
class Snapshot:
    """What one tool's bucket and pipeline held at one point of a script."""

    label: str
    dataset: dict[str, Any] | None
    state: Any
    failure: Any = None


@dataclass
class Ctx:
    """What a script gets: the library under test, where its pipeline keeps data, and what it records."""

    lib: Any
    bucket: Path
    pipelines_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)  # what the script observed (call counts...), compared too
    snapshots: list[Snapshot] = field(default_factory=list)

    @property
    def is_dlt(self) -> bool:
        return self.lib.__name__ == "dlt"

    def pipeline(self, name: str = "compat", **kwargs: Any) -> Any:
        kwargs.setdefault("dataset_name", DATASET)
        return self.lib.pipeline(
            name, destination=self.lib.destinations.filesystem(str(self.bucket)), pipelines_dir=str(self.pipelines_dir),
            **kwargs,
        )

    def checkpoint(self, p: Any, label: str | None = None, failure: Any = None) -> None:
        """Record the dataset and source state now (compared with the other tool's at the same checkpoint)."""
        label = label or f"checkpoint {len(self.snapshots) + 1}"
        dataset = read_dataset(self.bucket, p.dataset_name) if p is not None else None
        state = comparable_state(p.state.get("sources")) if p is not None else None
        self.snapshots.append(Snapshot(label, dataset, state, failure))

    def run(self, p: Any, data: Any, *, label: str | None = None, signature: Signature = error_class,
            drop_pending: bool = False, **kwargs: Any) -> Any:
        """``p.run(data, **kwargs)``, then a checkpoint; a failure is recorded (its `signature`), not raised. With
        `drop_pending` the failed package is dropped, as a user retrying with other data would."""
        failure = None
        try:
            p.run(data, **kwargs)
        except Exception as exc:  # noqa: BLE001 - both tools' failures are compared
            failure = signature(exc)
            if drop_pending:
                p.drop_pending_packages()
        self.checkpoint(p, label or f"run {len(self.snapshots) + 1}", failure)
        return p

    def attempt(self, label: str, action: Callable[[], Any], signature: Signature = error_class) -> Any:
        """Call `action`; note its failure's `signature` (or None) under `label` in ``ctx.notes``."""
        try:
            result = action()
        except Exception as exc:  # noqa: BLE001 - both tools' failures are compared
            self.notes[label] = signature(exc)
            return None
        self.notes[label] = None
        return result


def runs_of(build: Callable[[Any, int], Any], runs: int, pipeline_name: str = "compat", *,
            drop_pending: bool = False, signature: Signature = error_class, **run_kwargs: Any) -> Script:
    """A script that makes one pipeline and runs it `runs` times on ``build(lib, run index)``, a checkpoint after
    each run (``ctx.run``: a failing run is recorded, the next run goes on)."""

    def script(ctx: Ctx) -> Any:
        p = ctx.pipeline(pipeline_name)
        for index in range(runs):
            ctx.run(p, build(ctx.lib, index), label=f"run {index + 1}", signature=signature,
                    drop_pending=drop_pending, **run_kwargs)
        return p

    script.__name__ = getattr(build, "__name__", "script")
    return script


@dataclass
class Outcome:
    """What one tool's run of a script left: snapshots (the last one at the end), failure, notes, schema."""

    snapshots: list[Snapshot]
    error: Any = None  # the signature of the exception the script raised, if any
    notes: dict[str, Any] = field(default_factory=dict)
    table_hints: dict[str, Any] = field(default_factory=dict)
    contracts: dict[str, Any] = field(default_factory=dict)

    @property
    def dataset(self) -> dict[str, Any] | None:
        return self.snapshots[-1].dataset if self.snapshots else None

    @property
    def sources_state(self) -> Any:
        return self.snapshots[-1].state if self.snapshots else None


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


def _write_config(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def run_one(lib: Any, script: Script, root: Path, env: dict[str, str] | None = None,
            files: dict[str, str] | None = None, signature: Signature = error_class) -> Outcome:
    """Run `script` with `lib` in `root` (a bucket and a pipelines folder of its own). dlt sees only `env` and the
    TOML `files` (in its isolated project folder's ``.dlt/``); lakeload reads them from ``./.lakeload/``."""
    ctx = Ctx(lib, root / "bucket", root / "pipelines", dict(env or {}))
    if files:
        _write_config(root / "dlt_home" / ".dlt" if ctx.is_dlt else Path.cwd() / ".lakeload", files)
    isolation = isolated_dlt_config(root / "dlt_home") if ctx.is_dlt else contextlib.nullcontext()
    with isolation, _env(ctx.env):
        try:
            p = script(ctx)
        except Exception as exc:  # noqa: BLE001 - compared by the test: both tools must fail alike
            return Outcome(ctx.snapshots, signature(exc), as_json(ctx.notes))
    ctx.checkpoint(p, "end")
    return Outcome(ctx.snapshots, None, as_json(ctx.notes), table_hints(p) if p is not None else {},
                   schema_contracts(p) if p is not None else {})


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
        found[name] = as_json(hints)
    return found


def run_side_by_side(script: Script, tmp_path: Path, env: dict[str, str] | None = None,
                     files: dict[str, str] | None = None, signature: Signature = error_class) -> tuple[Outcome, Outcome]:
    import dlt

    import lakeload

    return (run_one(dlt, script, tmp_path / "dlt", env, files, signature),
            run_one(lakeload, script, tmp_path / "lakeload", env, files, signature))


def _without(tables: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {name: {k: v for k, v in hints.items() if k not in keys} for name, hints in tables.items()}


def _without_arrow_id_hints(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """lakeload's table hints without the Arrow id columns dlt's schema lacks (see `assert_same_snapshots`)."""
    out = copy.deepcopy(ours)
    for name, hints in out.items():
        dlt_columns = theirs.get(name, {}).get("columns", {})
        for column in ("_dlt_id", "_dlt_load_id"):
            if column not in dlt_columns:
                hints.get("columns", {}).pop(column, None)
    return out


def _same_problems_dropped(expected: dict[str, Any], actual: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The conformance reader's complaints that both buckets share are dlt's own behaviour, so not differences
    (e.g. `refresh="drop_sources"` leaves the files of a table it drops from the schema: "bucket entry 'products'
    is not a data table of the schema"). Complaints of one side only stay, and fail the diff."""
    shared = set(expected["problems"]) & set(actual["problems"])
    if not shared:
        return expected, actual
    return ({**expected, "problems": [p for p in expected["problems"] if p not in shared]},
            {**actual, "problems": [p for p in actual["problems"] if p not in shared]})


def assert_same_snapshots(theirs: list[Snapshot], ours: list[Snapshot], *, state: bool = True,
                          arrow_ids: bool = False) -> None:
    """Each checkpoint: the same label, failure, dataset (conformance diff) and (with `state`) source state. With
    `arrow_ids`, the `_dlt_id`/`_dlt_load_id` columns lakeload adds to Arrow-item tables are left out (a deliberate
    difference, README "Coming from dlt": dlt 1.31 writes Arrow tables and pandas frames without them)."""
    assert [s.label for s in ours] == [s.label for s in theirs]
    for expected, actual in zip(theirs, ours, strict=True):
        where = f"at {expected.label}"
        assert actual.failure == expected.failure, f"{where}: failure"
        assert (actual.dataset is None) == (expected.dataset is None), f"{where}: dataset written by one tool only"
        if expected.dataset is not None:
            left, right = drop_arrow_ids(expected.dataset, actual.dataset) if arrow_ids \
                else (expected.dataset, actual.dataset)
            assert diff(*_same_problems_dropped(left, right)) == [], where
        if state:
            assert actual.state == expected.state, f"{where}: source state"


def assert_same(
    script: Script, tmp_path: Path, *, state: bool = True, hints: bool = False, contracts: bool = False,
    env: dict[str, str] | None = None, files: dict[str, str] | None = None, signature: Signature = error_class,
    loads_rows: bool = True, hints_ignored: tuple[str, ...] = (), arrow_ids: bool = False,
) -> Outcome:
    """Both tools fail alike (by `signature`, the cause's class by default) or leave the same datasets and (with
    `state`) source state at every checkpoint, the same notes, and (with `hints`/`contracts`) the same stored
    table and column hints / schema contracts. With `loads_rows` (the default) the
    script must have loaded rows, so that the comparison compares something."""
    theirs, ours = run_side_by_side(script, tmp_path, env, files, signature)
    assert ours.error == theirs.error, "the script failed differently"
    assert_same_snapshots(theirs.snapshots, ours.snapshots, state=state, arrow_ids=arrow_ids)
    assert ours.notes == theirs.notes
    if hints:  # `hints_ignored`: table hints a test leaves out, saying why
        mine = _without(ours.table_hints, hints_ignored)
        if arrow_ids:
            mine = _without_arrow_id_hints(mine, theirs.table_hints)
        assert mine == _without(theirs.table_hints, hints_ignored)
    if contracts:
        assert ours.contracts == theirs.contracts
    if loads_rows and theirs.error is None:
        assert theirs.dataset is not None and any(t["rows"] for t in theirs.dataset["tables"].values()), \
            "the script loaded nothing: it compares nothing"
    return ours
