"""With many splits (small extract files), types fixed by earlier splits win exactly as in one sequential pass."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

import lakeload

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from bucket_utils import read_rows, stored_schema  # noqa: E402

pytestmark = pytest.mark.usefixtures("spark")


def records() -> list[dict[str, object]]:
    # every 7th record flips `ref` to text; the flip is the first `ref` of several extract files
    return [{"id": i, "ref": f"r{i}" if i % 7 == 0 and i > 0 else i, "pad": "x" * 200} for i in range(400)]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_many_splits_same_schema_and_rows_as_one_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, fmt: str
) -> None:
    caplog.set_level(logging.INFO, logger="lakeload.normalize")
    results = {}
    for name, max_bytes in (("one", None), ("many", "2000")):
        if max_bytes:
            monkeypatch.setenv("EXTRACT__FILE_MAX_BYTES", max_bytes)
        bucket = tmp_path / name
        p = lakeload.pipeline(f"splits_{name}", destination=lakeload.destinations.filesystem(str(bucket)),
                              dataset_name="ds", pipelines_dir=str(tmp_path / "p"))
        p.run(records(), table_name="t", loader_file_format=fmt)
        [package] = (tmp_path / "p" / f"splits_{name}" / "load" / "loaded").iterdir()
        splits = {f["split"] for f in json.loads((package / "package.json").read_text())["files"]}
        assert len(splits) == (1 if name == "one" else len(splits)) and (name == "one" or len(splits) > 20)
        schema = stored_schema(bucket, "ds")["tables"]["t"]["columns"]
        rows = sorted(read_rows(bucket, "ds", "t"), key=lambda r: r["id"])
        results[name] = ([(n, c["data_type"]) for n, c in schema.items()], [(r["id"], r["ref"], r.get("ref__v_text")) for r in rows])
    assert results["one"] == results["many"]
    assert any("normalizing it again" in r.getMessage() for r in caplog.records)  # the conflict path ran
    assert ("ref__v_text", "text") in results["one"][0]


def test_parquet_splits_keep_their_draft_files_only_when_their_columns_are_the_final_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet as pq

    monkeypatch.setenv("EXTRACT__FILE_MAX_BYTES", "2000")
    early = [{"id": i, "a": f"a{i}", "b": i * 2, "pad": "x" * 100} for i in range(200)]
    late = [{"b": i * 2, "late": True, "a": f"a{i}", "id": i, "pad": "x" * 100} for i in range(200, 400)]
    bucket = tmp_path / "b"
    p = lakeload.pipeline("drafts", destination=lakeload.destinations.filesystem(str(bucket)),
                          dataset_name="ds", pipelines_dir=str(tmp_path / "p"))
    p.run(early + late, table_name="t", loader_file_format="parquet")
    [package] = (tmp_path / "p" / "drafts" / "load" / "loaded").iterdir()
    files = json.loads((package / "package.json").read_text())["files"]
    assert len({f["split"] for f in files}) > 20 and not any("draft" in f for f in files)
    final = list(stored_schema(bucket, "ds")["tables"]["t"]["columns"])
    orders = [pq.read_schema(path).names for path in sorted((bucket / "ds" / "t").glob("*.parquet"))]
    assert all(sorted(order) == sorted(final) for order in orders)  # early splits were rewritten with `late`
    assert final in orders and any(order != final for order in orders)  # late splits kept their own order
    rows = sorted(read_rows(bucket, "ds", "t"), key=lambda r: r["id"])
    assert [(r["id"], r["a"], r["b"], r.get("late")) for r in rows] == [
        (i, f"a{i}", i * 2, True if i >= 200 else None) for i in range(400)
    ]
