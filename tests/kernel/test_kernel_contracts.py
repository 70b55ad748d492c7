"""The typed shapes of `lakeload.kernel.contracts` match what the kernel really builds (TypedDicts are not checked
at run time, so a key renamed in a writer but not in its type would go unnoticed by mypy's callers)."""

from __future__ import annotations

import os
from typing import Any

from lakeload.kernel.contracts import TAddAction, TLoadedFile, TPackageFile, TTaskError
from lakeload.kernel.delta.files import DeltaFileSpec, write_files
from lakeload.kernel.load.copy import _copied
from lakeload.kernel.normalize.relational import C_DLT_ROOT_ID, C_OCCURRENCE, RootColumns
from lakeload.kernel.normalize.writers import ArrowChunkWriter, TableFileWriter
from lakeload.kernel.spark.runner import task_runner
from lakeload.schema.typing import TColumn, TTable


def _keys(typed: Any) -> set[str]:
    return set(typed.__required_keys__ | typed.__optional_keys__)


def test_a_final_file_and_a_chunk_are_package_files(tmp_path: os.PathLike[str]) -> None:
    columns: dict[str, TColumn] = {"id": {"name": "id", "data_type": "bigint", "nullable": True}}
    writer = TableFileWriter(os.path.join(tmp_path, "users.a1.parquet"), "parquet", columns, False, "users", "a1")
    writer.write({"id": 1})
    (final,) = writer.close()
    assert set(final) == {"table", "file_id", "ext", "path", "rows", "bytes"} <= _keys(TPackageFile)
    assert TPackageFile.__required_keys__ == {"table", "path", "rows"}
    tables: dict[str, TTable] = {"users": {"name": "users", "columns": columns}}
    chunks = ArrowChunkWriter(os.path.join(tmp_path, "_chunks.000000.users"), "users", tables)
    chunks.write({"id": 1})
    (chunk,) = chunks.close()
    assert set(chunk) == {"table", "path", "rows", "chunk"}
    assert set(_copied(final, "users/a1.parquet")) == _keys(TLoadedFile)


def test_a_delta_add_action_has_its_typed_keys(tmp_path: os.PathLike[str]) -> None:
    import pyarrow as pa

    spec = DeltaFileSpec(bucket_url=str(tmp_path), fs_kwargs={}, table_dir=str(tmp_path), schema=pa.schema([("id", pa.int64())]))
    (action,) = write_files(spec, [pa.table({"id": [1, 2]})], "00000-0")
    assert set(action) == _keys(TAddAction)


def test_a_failed_task_returns_its_typed_error_keys() -> None:
    import orjson

    def fail(payload: object, item: object) -> None:
        raise ValueError("no")

    result = orjson.loads(task_runner(fail, None, [1], None)(0))
    assert set(result) == TTaskError.__required_keys__


def test_root_columns_are_the_normalizer_columns() -> None:
    assert _keys(RootColumns) == {C_DLT_ROOT_ID, C_OCCURRENCE}
