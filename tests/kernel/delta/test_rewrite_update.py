"""The executor rewrite's column update (scd2 retiring records): the chosen positions get the value, every other
row and column stays as it was, in order, across the file's batches (no Spark)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lakeload.kernel.delta.read import SnapshotSpec
from lakeload.kernel.delta.rewrite import ColumnUpdate, RewriteListing, RewriteSpec, changed_rows

SCHEMA = pa.schema([("id", pa.int64()), ("valid_to", pa.timestamp("us", tz="UTC"))])
BOUNDARY = datetime(2024, 2, 1, tzinfo=UTC)


def write(folder: Path, rows: int) -> None:
    table = pa.table({"id": list(range(rows)), "valid_to": pa.nulls(rows, SCHEMA.field("valid_to").type)}, schema=SCHEMA)
    pq.write_table(table, folder / "part-0.parquet", row_group_size=3)  # several batches: positions cross them


def spec(folder: Path, update: ColumnUpdate | None) -> RewriteSpec:
    read = SnapshotSpec("file://" + str(folder), {}, str(folder), SCHEMA)
    return RewriteSpec(read, None, update)  # type: ignore[arg-type]  # (the writer is not used here)


def test_update_sets_the_column_at_the_chosen_positions_only(tmp_path: Path) -> None:
    write(tmp_path, 8)
    listing = RewriteListing("part-0.parquet", {})
    out = pa.concat_tables(changed_rows(spec(tmp_path, ColumnUpdate("valid_to", BOUNDARY)), listing, np.array([1, 4, 7])))
    assert out.column("id").to_pylist() == list(range(8))
    assert [i for i, v in enumerate(out.column("valid_to").to_pylist()) if v is not None] == [1, 4, 7]
    assert out.column("valid_to")[4].as_py() == BOUNDARY


def test_without_an_update_the_positions_are_dropped(tmp_path: Path) -> None:
    write(tmp_path, 8)
    out = pa.concat_tables(changed_rows(spec(tmp_path, None), RewriteListing("part-0.parquet", {}), np.array([1, 4, 7])))
    assert out.column("id").to_pylist() == [0, 2, 3, 5, 6]
