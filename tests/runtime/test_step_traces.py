"""`pipeline.last_trace` after `extract()`, `normalize()` and `load()` called on their own, side by side with dlt 1.31:
the same script runs with each and the steps each trace holds, and which step infos it gives, are compared; and
lakeload's `trace.json` (`lakeload pipeline <name> trace`) follows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import dlt
import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def failing() -> Any:
    yield {"id": 0}
    raise ValueError("the API went away")


def observed(lib: Any, root: Path) -> list[tuple[str, Any]]:
    """What `last_trace` holds after each call: the steps, and the type of each `last_*_info`."""

    def make() -> Any:
        return lib.pipeline("traced", destination=lib.destinations.filesystem(str(root / "bucket")),
                            pipelines_dir=str(root / "pipelines"), dataset_name="ds")

    pipeline = make()
    seen: list[tuple[str, Any]] = []

    def look(label: str, trace: Any = None) -> None:
        trace = trace or pipeline.last_trace
        if trace is None:
            seen.append((label, None))
            return
        infos = [type(info).__name__ for info in (trace.last_extract_info, trace.last_normalize_info, trace.last_load_info)]
        seen.append((label, ([step.step for step in trace.steps], infos)))

    look("new")
    pipeline.extract([{"id": 1}], table_name="items")
    look("extract")
    pipeline.normalize()
    look("normalize")
    pipeline.load()
    look("load")
    pipeline.normalize()  # nothing to normalize: a step all the same
    look("normalize again")
    pipeline.run([{"id": 2}], table_name="items")
    look("run")
    pipeline.extract([{"id": 3}], table_name="items")
    look("extract after run")
    seen.append(("new object", [step.step for step in make().last_trace.steps]))  # read back from the working folder
    with pytest.raises(Exception, match="the API went away"):
        pipeline.extract(failing(), table_name="items")
    steps = pipeline.last_trace.steps
    seen.append(("failed extract", ([s.step for s in steps], steps[-1].step_exception is not None)))
    pipeline = pipeline.drop()
    look("dropped")
    return seen


def test_steps_called_on_their_own_are_traced_as_dlt(tmp_path: Path) -> None:
    dlt_seen = observed(dlt, tmp_path / "dlt")
    assert dlt_seen[:4] == [
        ("new", None),
        ("extract", (["extract"], ["ExtractInfo", "NoneType", "NoneType"])),
        ("normalize", (["extract", "normalize"], ["ExtractInfo", "NormalizeInfo", "NoneType"])),
        ("load", (["extract", "normalize", "load"], ["ExtractInfo", "NormalizeInfo", "LoadInfo"])),
    ]  # the oracle
    assert dict(dlt_seen)["extract after run"][0] == ["extract", "normalize", "load", "run", "extract"]
    assert observed(lakeload, tmp_path / "lakeload") == dlt_seen


def test_trace_json_holds_the_steps_called_on_their_own(tmp_path: Path) -> None:
    pipeline = lakeload.pipeline("traced_cli", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                                 pipelines_dir=str(tmp_path / "pipelines"), dataset_name="ds")
    pipeline.extract([{"id": 1}, {"id": 2}], table_name="items")
    pipeline.normalize()
    pipeline.load()
    shown = subprocess.run(
        [sys.executable, "-m", "lakeload.cli", "pipeline", "traced_cli", "trace", "--pipelines-dir", str(tmp_path / "pipelines")],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )
    assert shown.returncode == 0, shown.stderr
    steps = [line.split()[0] for line in shown.stdout.splitlines()[1:] if line.startswith("  ") and " s  " in line]
    assert steps == ["extract", "normalize", "load"]
    assert "items: 2" in shown.stdout  # the load's package, its rows per table
