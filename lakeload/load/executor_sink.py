"""Executor-safe: feeds one normalized file to a sink function in batches, resumably.

After each batch the number of batches done is written (atomically) beside the package, so a task
that failed, or a load that was killed, starts again at the first batch not yet delivered.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow.parquet as pq


@dataclass
class SinkPayload:
    """What sink tasks need: the function, batching, and each table's schema."""

    func: Callable[[Any, dict[str, Any]], Any]
    package_dir: str
    batch_size: int
    skip_dlt_columns: bool
    tables: dict[str, dict[str, Any]]


def _rows(path: str) -> Iterator[dict[str, Any]]:
    if path.endswith(".parquet"):
        for batch in pq.ParquetFile(path).iter_batches(batch_size=10_000):
            yield from batch.to_pylist()
        return
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        for line in f:
            if line.strip():
                yield orjson.loads(line)


def _batches(rows: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def progress_path(package_dir: str, file_id: str) -> str:
    return os.path.join(package_dir, "sink_progress", f"{file_id}.json")


def batches_done(package_dir: str, file_id: str) -> int:
    path = progress_path(package_dir, file_id)
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as f:
        return int(orjson.loads(f.read())["batches_done"])


def _record(package_dir: str, file_id: str, done: int) -> None:
    path = progress_path(package_dir, file_id)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(orjson.dumps({"batches_done": done}))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def deliver_file(payload: SinkPayload, file: dict[str, Any]) -> dict[str, Any]:
    """Call the sink for every batch of one file not delivered yet; returns counts."""
    table = payload.tables[file["table"]]
    done = batches_done(payload.package_dir, file["file_id"])
    rows = _rows(os.path.join(payload.package_dir, file["path"]))
    if payload.skip_dlt_columns:
        rows = ({k: v for k, v in row.items() if not k.startswith("_dlt_")} for row in rows)
    sent = skipped = 0
    for index, batch in enumerate(_batches(rows, payload.batch_size)):
        if index < done:
            skipped += 1
            continue
        payload.func(batch, table)
        sent += 1
        _record(payload.package_dir, file["file_id"], index + 1)
    return {"table": file["table"], "batches_sent": sent, "batches_skipped": skipped, "pid": os.getpid()}
