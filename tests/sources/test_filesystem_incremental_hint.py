"""dlt's documented way to load only new files, against dlt 1.31: `files.apply_hints(incremental=
incremental("modification_date"))` on the files resource, then `(files | read_csv()).with_name("table")`. Real
files whose modification times the script sets (os.utime); each run loads the same rows as dlt's and leaves the
same incremental state (cursor, hashes, under dlt's resource name).

Not compared: `_dlt_loads` (lakeload records a load for a run that found nothing new, dlt drops such an empty
package), CSV column hints (Spark infers small integers as 32-bit), and the table of an unrenamed reader (dlt's
`files | read_jsonl()` loads into `_read_jsonl`, lakeload's into `read_jsonl`)."""

from __future__ import annotations

import gzip
import importlib
import json
import os
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import compat.compat_harness  # noqa: F401 - puts tests/compat and tests/conformance on sys.path
import pyarrow.parquet as pq
import pytest
from compat_harness import Ctx, run_side_by_side

pytestmark = pytest.mark.usefixtures("spark")
T0 = 1_700_000_000


def write(folder: Path, name: str, rows: list[dict[str, Any]], mtime: int) -> None:
    path = folder / name
    if name.endswith(".csv"):
        path.write_text("id,name\n" + "".join(f"{r['id']},{r['name']}\n" for r in rows))
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.utime(path, (mtime, mtime))


def files_script(reader: str, renamed: bool) -> Any:
    ext = "csv" if reader == "read_csv" else "jsonl"

    def script(ctx: Ctx) -> Any:
        sources = importlib.import_module(f"{ctx.lib.__name__}.sources.filesystem")
        folder = ctx.bucket.parent.parent / "files"  # one path for both tools: the file URLs (hashed) are equal
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)

        def rows(first: int, n: int) -> list[dict[str, Any]]:
            return [{"id": i, "name": f"n{i}"} for i in range(first, first + n)]

        def files_to_table() -> Any:
            files = sources.filesystem(bucket_url=str(folder), file_glob=f"*.{ext}")
            files.apply_hints(incremental=ctx.lib.sources.incremental("modification_date"))
            piped = files | getattr(sources, reader)()
            return piped.with_name("table") if renamed else piped

        table = "table" if renamed else f"_{reader}" if ctx.is_dlt else reader  # dlt's reader functions are `_read_*`
        p = ctx.pipeline("files_inc")
        counts = ctx.notes.setdefault("rows per run", [])
        write(folder, f"a.{ext}", rows(0, 3), T0)
        write(folder, f"b.{ext}", rows(3, 2), T0 + 100)
        for label, change in [
            ("first", None),
            ("unchanged", None),
            ("a new file and a late one with an older time", lambda: (
                write(folder, f"c.{ext}", rows(5, 4), T0 + 150), write(folder, f"d.{ext}", rows(9, 1), T0 + 50))),
            ("a touched file", lambda: os.utime(folder / f"a.{ext}", (T0 + 200, T0 + 200))),
        ]:
            if change is not None:
                change()
            ctx.run(p, files_to_table(), label=label)
            counts.append(p.last_trace.last_normalize_info.row_counts.get(table, 0))
        ctx.notes["ids per load"] = ids_per_load(ctx.bucket / p.dataset_name / table)
        return p

    script.__name__ = f"files_{reader}_{'renamed' if renamed else 'plain'}"
    return script


def ids_per_load(folder: Path) -> list[list[int]]:
    """The ids of the rows of each load, in load order, read from the table's files in the bucket."""
    loads: dict[str, list[int]] = defaultdict(list)
    for path in folder.iterdir():
        if path.name.endswith(".parquet"):
            ids = pq.read_table(path).column("id").to_pylist()
        else:
            raw = path.read_bytes()
            text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
            ids = [json.loads(line)["id"] for line in text.splitlines() if line.strip()]
        loads[path.name.split(".")[0] + "." + path.name.split(".")[1]] += ids
    return [sorted(loads[load_id]) for load_id in sorted(loads, key=float)]


@pytest.mark.parametrize(("reader", "renamed"), [("read_csv", True), ("read_jsonl", False)])
def test_incremental_hint_on_files_loads_only_newer_files_as_dlt(reader: str, renamed: bool, tmp_path: Path) -> None:
    theirs, ours = run_side_by_side(files_script(reader, renamed), tmp_path)
    assert theirs.error is None and ours.error is None
    assert theirs.notes["rows per run"] == [5, 0, 4, 3]  # the late file (older time) is missed
    assert theirs.notes["ids per load"] == [[0, 1, 2, 3, 4], [5, 6, 7, 8], [0, 1, 2]]
    assert ours.notes == theirs.notes
    assert [s.state for s in ours.snapshots] == [s.state for s in theirs.snapshots]  # cursor and hashes, each run
    resource = "filesystem_table" if renamed else "filesystem"
    assert "modification_date" in ours.sources_state["files_inc"]["resources"][resource]["incremental"]
