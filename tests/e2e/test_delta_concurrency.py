"""Two writers on one Delta table, each its own process, Spark and working folder: every row exactly once.

Each race is started at once in both processes (this test process and `delta_race_child.py`), after both
have extracted and normalized their packages, so their loads overlap from reading the table to committing:
- `new`: both merge the same keys, none of which the table holds yet;
- `overlap`: both merge keys the table holds, and some of each other's;
- `create`: both merge into a table that does not exist yet;
- `same-name`: both append with the same pipeline name from two working folders.
A merge's root rows and nested rows must come out as one writer's, whole: one row per key, each root row with
exactly its own nested rows, no nested row without its root row. The loser of a commit reads the table again
and redoes its work; a load that still fails must fail with `DeltaConflictError`, and `pipeline.load()` then
finishes it. One load id older than the table's last (a clock stepped back, a second working folder) is loaded,
not taken as done.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

import lakeload
from lakeload.errors import TableConflictError

CHILD = Path(__file__).with_name("delta_race_child.py")
ROWS = 120  # root rows each writer merges in a race (two nested rows each)
TRIALS = [
    *({"kind": "new", "table": f"new_{n}"} for n in range(5)),
    *({"kind": "overlap", "table": f"overlap_{n}"} for n in range(5)),
    {"kind": "create", "table": "created"},
    {"kind": "same-name", "table": "appended"},
]


def race_rows(trial: dict[str, Any], writer: str) -> list[dict[str, Any]]:
    """A writer's rows of a trial: `new` and `create` keys 0..ROWS-1 for both; `overlap` keys shifted by
    half for `b`, over a table seeded with keys 0..ROWS-1; `same-name` distinct ids per writer."""
    if trial["kind"] == "same-name":
        base = 0 if writer == "a" else ROWS
        return [{"id": base + i, "v": writer} for i in range(ROWS)]
    shift = ROWS // 2 if trial["kind"] == "overlap" and writer == "b" else 0
    return [{"id": shift + i, "v": writer, "tags": [{"t": f"{writer}-{shift + i}-{j}"} for j in range(2)]} for i in range(ROWS)]


def pipeline_name(trial: dict[str, Any], writer: str) -> str:
    return "same_name" if trial["kind"] == "same-name" else f"{trial['table']}_{writer}"


def prepare(bucket: str, pipes: str, trial: dict[str, Any], writer: str) -> lakeload.Pipeline:
    """A pipeline of its own working folder with the trial's package extracted and normalized, not loaded."""
    name = pipeline_name(trial, writer)
    p = lakeload.pipeline(name, destination=lakeload.destinations.filesystem(bucket), dataset_name="ds",
                          pipelines_dir=os.path.join(pipes, writer))
    disposition = "append" if trial["kind"] == "same-name" else "merge"
    p.extract(race_rows(trial, writer), table_name=trial["table"], table_format=trial.get("format", "delta"), primary_key="id",
              write_disposition=disposition)
    p.normalize()
    return p


class Retries(logging.Handler):
    """Counts the loader's "reading it again" lines: a commit that lost and was redone."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "reading it again" in record.getMessage()


def race_load(p: lakeload.Pipeline) -> dict[str, Any]:
    """Load the pipeline's pending package; after a `DeltaConflictError`, load again as its message says."""
    retries, logger = Retries(), logging.getLogger("lakeload.load")
    level = logger.level
    logger.addHandler(retries)
    logger.setLevel(logging.INFO)
    error = ""
    try:
        try:
            p.load()
        except Exception as exc:  # noqa: BLE001 - checked by the test
            error = f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, TableConflictError) and not isinstance(exc.__cause__, TableConflictError):
                return {"retries": retries.count, "error": error, "finished": False}
            p.load()
    finally:
        logger.removeHandler(retries)
        logger.setLevel(level)
    return {"retries": retries.count, "error": error, "finished": not p.storage.list_packages("normalized")}


def rows_of(bucket: Path, table: str, fmt: str = "delta") -> list[dict[str, Any]]:
    path = bucket / "ds" / table
    if not path.exists():
        return []
    if fmt == "iceberg":
        from pyiceberg.table import StaticTable

        newest = max((path / "metadata").glob("*.metadata.json"), key=lambda p: int(p.name.split("-", 1)[0]))
        return StaticTable.from_metadata(f"file://{newest}").scan().to_arrow().to_pylist()
    return DeltaTable(str(path)).to_pyarrow_table().to_pylist()


def seeded_keys(trial: dict[str, Any]) -> list[int]:
    """The keys a trial's table holds before the race (`new`: keys nobody races on)."""
    return {"overlap": list(range(ROWS)), "new": list(range(10_000, 10_005))}.get(trial["kind"], [])


def check_merged(bucket: Path, trial: dict[str, Any]) -> None:
    """One root row per key, each whole from one writer (or the seed), with exactly its own two nested rows."""
    fmt = trial.get("format", "delta")
    roots, tags = rows_of(bucket, trial["table"], fmt), rows_of(bucket, f"{trial['table']}__tags", fmt)
    keys = sorted(r["id"] for r in roots)
    expected = sorted({r["id"] for w in "ab" for r in race_rows(trial, w)} | set(seeded_keys(trial)))
    assert keys == expected, f"{trial['table']}: {len(keys) - len(set(keys))} duplicate keys, {len(set(expected) - set(keys))} missing"
    by_id = {r["_dlt_id"]: r for r in roots}
    orphans = [t for t in tags if t["_dlt_root_id"] not in by_id or t["_dlt_parent_id"] not in by_id]
    assert not orphans, f"{trial['table']}: {len(orphans)} nested rows without their root row"
    per_root: dict[str, list[str]] = {}
    for t in tags:
        per_root.setdefault(t["_dlt_root_id"], []).append(t["t"])
    for root_id, root in by_id.items():
        assert sorted(per_root.get(root_id, [])) == [f"{root['v']}-{root['id']}-{j}" for j in range(2)], (trial, root)


def start_child(bucket: Path, pipes: Path, signals: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join([str(CHILD.parent), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.Popen([sys.executable, str(CHILD), str(bucket), str(pipes), str(signals)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def wait_for(path: Path, child: subprocess.Popen[str], seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            os.killpg(child.pid, signal.SIGKILL)
            raise AssertionError(f"the child stopped before {path.name}: {child.communicate()[1][-4000:]}")
        time.sleep(0.002)


@pytest.mark.slow  # a second process with its own Spark; twelve races
def test_two_processes_racing_on_one_delta_table_lose_and_duplicate_nothing(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, spark: Any
) -> None:
    run_races(TRIALS, bucket, pipelines_dir, tmp_path)


@pytest.mark.slow  # a second process with its own Spark; twelve races
def test_two_processes_racing_on_one_iceberg_table_lose_and_duplicate_nothing(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, spark: Any
) -> None:
    """The same races on Iceberg tables of the embedded catalog (a local bucket: the table's commit lock)."""
    run_races([{**trial, "format": "iceberg"} for trial in TRIALS], bucket, pipelines_dir, tmp_path)


@pytest.mark.slow  # a second process with its own Spark; six races
def test_two_processes_racing_through_an_iceberg_rest_catalog_lose_and_duplicate_nothing(
    bucket: Path, pipelines_dir: Path, tmp_path: Path, spark: Any, iceberg_rest_catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The races on Iceberg tables of a REST catalog server (both processes its clients): the server refuses a
    commit made on a snapshot that is no longer the table's (409), and the loser reads the table again."""
    monkeypatch.setenv("ICEBERG_CATALOG__ICEBERG_CATALOG_TYPE", "rest")  # the child inherits the environment
    monkeypatch.setenv("ICEBERG_CATALOG__ICEBERG_CATALOG_CONFIG", json.dumps(iceberg_rest_catalog.config()))
    kinds = {"new": 2, "overlap": 2, "create": 1, "same-name": 1}
    run_races([{**t, "format": "iceberg"} for t in _first_of_each(kinds)], bucket, pipelines_dir, tmp_path)


def _first_of_each(kinds: dict[str, int]) -> list[dict[str, Any]]:
    """The first `kinds[kind]` trials of each kind."""
    taken: dict[str, int] = {}
    chosen = []
    for trial in TRIALS:
        if taken.get(trial["kind"], 0) < kinds.get(trial["kind"], 0):
            taken[trial["kind"]] = taken.get(trial["kind"], 0) + 1
            chosen.append(trial)
    return chosen


def run_races(trials: list[dict[str, Any]], bucket: Path, pipelines_dir: Path, tmp_path: Path) -> None:
    """Seed the trials' tables, race this process against the child on each, and check every table."""
    TRIALS = trials  # noqa: N806 - the module's trials, or their Iceberg twins
    signals = tmp_path / "signals"
    signals.mkdir()
    (signals / "trials.json").write_text(json.dumps(TRIALS))
    seed = lakeload.pipeline("seed", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                             pipelines_dir=str(pipelines_dir / "seed"))
    for trial in TRIALS:  # every table but `created` exists before the race
        if seeded_keys(trial):
            rows = [{"id": k, "v": "seed", "tags": [{"t": f"seed-{k}-{j}"} for j in range(2)]} for k in seeded_keys(trial)]
            seed.run(rows, table_name=trial["table"], table_format=trial.get("format", "delta"), primary_key="id",
                     write_disposition="merge")
    child = start_child(bucket, pipelines_dir, signals)
    try:
        mine = [prepare(str(bucket), str(pipelines_dir), trial, "a") for trial in TRIALS]
        wait_for(signals / "ready", child)
        results = []
        for n, (trial, p) in enumerate(zip(TRIALS, mine, strict=True)):
            (signals / f"go-{n}.tmp").write_text("go")
            (signals / f"go-{n}.tmp").rename(signals / f"go-{n}")
            result = race_load(p)
            wait_for(signals / f"done-{n}", child)
            results.append((trial, result, json.loads((signals / f"done-{n}").read_text())))
        assert child.wait(timeout=120) == 0, child.communicate()[1][-4000:]
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    for trial, a, b in results:
        for result in (a, b):
            assert result["finished"], (trial, result)
            assert not result["error"] or result["error"].startswith(("DeltaConflictError", "IcebergConflictError", "LoadStepFailed")), result
        if trial["kind"] == "same-name":
            assert sorted(r["id"] for r in rows_of(bucket, trial["table"], trial.get("format", "delta"))) == list(range(2 * ROWS))
        else:
            check_merged(bucket, trial)
    assert sum(a["retries"] + b["retries"] for _, a, b in results) >= 1, "no commit lost a race: the test raced nothing"


def _delta_pipeline(bucket: Path, pipelines_dir: Path, name: str, folder: str) -> lakeload.Pipeline:
    return lakeload.pipeline(name, destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                             pipelines_dir=str(pipelines_dir / folder))


@pytest.mark.parametrize("disposition", ["append", "merge", "replace"])
def test_a_load_whose_id_is_older_than_the_tables_last_is_loaded(
    bucket: Path, pipelines_dir: Path, spark: Any, monkeypatch: pytest.MonkeyPatch, disposition: str
) -> None:
    """The host clock steps back an hour between two runs of one pipeline: the second run's load id is older than
    the table's last, and its rows arrive all the same (in the Delta table as in the plain Parquet one)."""
    import lakeload.extract.extractor as extractor

    p = _delta_pipeline(bucket, pipelines_dir, "clock", "one")
    hints = {"write_disposition": disposition, "primary_key": "id"}
    plain = {"write_disposition": "append" if disposition == "merge" else disposition}  # (merge needs a table format)
    p.run([{"id": i, "tags": [i]} for i in range(10)], table_name="events", table_format="delta", **hints)
    p.run([{"id": i} for i in range(10)], table_name="plain", loader_file_format="parquet", **plain)
    real = extractor.new_load_id
    monkeypatch.setattr(extractor, "new_load_id", lambda: str(float(real()) - 3600))
    p.run([{"id": i, "tags": [i]} for i in range(10, 20)], table_name="events", table_format="delta", **hints)
    p.run([{"id": i} for i in range(10, 20)], table_name="plain", loader_file_format="parquet", **plain)
    expected = list(range(10, 20)) if disposition == "replace" else list(range(20))
    assert sorted(r["id"] for r in rows_of(bucket, "events")) == expected
    assert sorted(r["value"] for r in rows_of(bucket, "events__tags")) == expected
    with p.sql_client() as client:  # lakeload's readers see the older-id load too (versions order loads, not ids)
        for table in ("plain", "events"):
            assert sorted(r[0] for r in client.execute_sql(f"SELECT id FROM {table}")) == expected, table
    assert sorted(p.dataset().events.df()["id"]) == expected


def test_one_pipeline_name_from_two_working_folders_loads_both(bucket: Path, pipelines_dir: Path, spark: Any) -> None:
    """Two hosts (or a container beside a laptop) run the same pipeline name: the package extracted first and loaded
    last has the older load id, and is loaded, not skipped."""
    first, second = (_delta_pipeline(bucket, pipelines_dir, "shared", folder) for folder in ("host_a", "host_b"))
    first.extract([{"id": i} for i in range(50)], table_name="events", table_format="delta")
    first.normalize()
    second.run([{"id": i} for i in range(50, 100)], table_name="events", table_format="delta")
    first.load()
    assert sorted(r["id"] for r in rows_of(bucket, "events")) == list(range(100))
