"""Executor-safe: feeds one normalized file to a sink function in batches, resumably.

After each batch the number of batches done is written (atomically) beside the package, so a task
that failed, or a load that was killed, starts again at the first batch not yet delivered.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypedDict, cast

import orjson
import pyarrow.parquet as pq

import lakeload.kernel.spark.working as wio
from lakeload.kernel.contracts import TPackageFile, TRow, TSinkResult
from lakeload.kernel.spark.working import WorkingStore
from lakeload.schema.typing import TTable


class SinkProgress(TypedDict):
    """The progress file of one package file (`sink_progress/<file_id>.json`)."""

    batches_done: int


@dataclass
class SinkPayload:
    """What sink tasks need: the function, batching, and each table's schema."""

    # the user's sink function: (a batch of rows, the table's `TTableSchema`); its own annotations may name dlt's
    # TTableSchema or a plain dict, so the table argument is not narrowed here
    func: Callable[[list[TRow], Any], Any]
    package_dir: str
    batch_size: int
    skip_dlt_columns: bool
    tables: dict[str, TTable]
    store: WorkingStore | None = None  # the working bucket of package data URLs (the driver does not `use()` one)


def read_rows(path: str, store: WorkingStore | None = None) -> Iterator[TRow]:
    """The rows of a normalized file (Parquet, or JSONL that may be gzipped), one dict each, streamed."""
    if path.endswith(".parquet"):
        with wio.open_input(path, store) as raw:
            for batch in pq.ParquetFile(raw).iter_batches(batch_size=10_000):
                yield from batch.to_pylist()
        return
    with wio.open_input(path, store) as raw, (gzip.open(raw, "rb") if path.endswith(".gz") else raw) as f:
        for line in f:
            if line.strip():
                yield cast(TRow, orjson.loads(line))


def _batches(rows: Iterator[TRow], size: int) -> Iterator[list[TRow]]:
    batch: list[TRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def progress_path(package_dir: str, file_id: str) -> str:
    return wio.join(package_dir, "sink_progress", f"{file_id}.json")


def batches_done(package_dir: str, file_id: str, store: WorkingStore | None = None) -> int:
    path = progress_path(package_dir, file_id)
    if not wio.exists(path, store):
        return 0
    progress = cast(SinkProgress, orjson.loads(wio.read_bytes(path, store)))
    return int(progress["batches_done"])


def _record(package_dir: str, file_id: str, done: int, store: WorkingStore | None) -> None:
    path = progress_path(package_dir, file_id)
    if wio.is_remote(path):
        with wio.local_target(path, store) as local, open(local, "wb") as f:
            f.write(orjson.dumps(SinkProgress(batches_done=done)))
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(SinkProgress(batches_done=done)))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def deliver_file(payload: SinkPayload, file: TPackageFile) -> TSinkResult:
    """Call the sink for every batch of one file not delivered yet; returns counts."""
    table = payload.tables[file["table"]]
    done = batches_done(payload.package_dir, file["file_id"], payload.store)
    rows = read_rows(wio.join(payload.package_dir, file["path"]), payload.store)
    if payload.skip_dlt_columns:
        rows = ({k: v for k, v in row.items() if not k.startswith("_dlt_")} for row in rows)
    sent = skipped = 0
    for index, batch in enumerate(_batches(rows, payload.batch_size)):
        if index < done:
            skipped += 1
            continue
        payload.func(batch, table)
        sent += 1
        _record(payload.package_dir, file["file_id"], index + 1, payload.store)
    return {"table": file["table"], "batches_sent": sent, "batches_skipped": skipped, "pid": os.getpid()}
