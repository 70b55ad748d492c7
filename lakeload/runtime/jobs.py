"""The jobs of a load package as dlt shows them: `package.jobs["completed_jobs"][0].job_file_info.table_name`.

A job is one file of the package. `LoadJobInfo` has dlt's fields (`state`, `file_path`, `file_size`,
`created_at`, `elapsed`, `job_file_info`, `failed_message`) and keeps lakeload's file keys readable as a dict
(`job["table"]`, `job["path"]`, `job["rows"]`), as scripts written against earlier lakeload versions read them.

Example (`package` of a completed run, e.g. `info.load_packages[0]`)::

    job = package.jobs["completed_jobs"][0]
    job.job_file_info.table_name, job.file_size, job["rows"]
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any, NamedTuple

import pendulum

COMPRESSED_SUFFIX = ".gz"


class ParsedLoadJobFileName(NamedTuple):
    """A job file's name in parts (dlt's): `<table_name>.<file_id>.<file_format>[.gz]`."""

    table_name: str
    file_id: str
    retry_count: int
    file_format: str
    is_compressed: bool = False

    def job_id(self) -> str:
        """The job's id, as dlt writes it: table, file id and format."""
        return f"{self.table_name}.{self.file_id}.{self.file_format}{COMPRESSED_SUFFIX if self.is_compressed else ''}"


class LoadJobInfo(NamedTuple):
    """One job (file) of a package, with dlt's fields; `job[key]` reads lakeload's file metadata by key."""

    state: str
    file_path: str
    file_size: int
    created_at: datetime | None
    elapsed: float
    job_file_info: ParsedLoadJobFileName
    failed_message: str | None
    file: dict[str, Any]  # lakeload's metadata of the file: table, path, rows, bytes

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        """`job["table"]` reads the file's metadata, `job[0]` the tuple's field, as dlt's NamedTuple."""
        if isinstance(key, str):
            return self.file[key]
        return tuple.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        """The file's metadata `key`, or `default`."""
        return self.file.get(key, default)

    def asdict(self) -> dict[str, Any]:
        """dlt's flat dict of a job: its fields, the file name's parts and `job_id`."""
        values = self._asdict()
        values.pop("file")
        values.update(values.pop("job_file_info")._asdict(), job_id=self.job_file_info.job_id())
        values["created_at"] = self.created_at.isoformat() if self.created_at else None
        return values

    def asstr(self, verbosity: int = 0) -> str:
        info = self.job_file_info
        return (f"Job: {info.job_id()}, table: {info.table_name} in {self.state}. File type: {info.file_format}, "
                f"size: {self.file_size} bytes. Started on: {self.created_at} and completed in {self.elapsed:.2f} s.")


def parse_file_name(table: str, path: str) -> ParsedLoadJobFileName:
    """The parts of a job file's name: its table, its id (the name's last part that is not the table) and its format:
    a loaded file (`<load_id>.<file_id>.<ext>`), a normalized one (`<table>.<file_id>.<ext>`) and an extracted one
    (`<split>.<table>.<ext>`) alike.

    >>> parse_file_name("users", "ds/users/1795296531.14.a1b2c3d4e5.jsonl.gz")
    ParsedLoadJobFileName(table_name='users', file_id='a1b2c3d4e5', retry_count=0, file_format='jsonl', is_compressed=True)
    >>> parse_file_name("users", "data/000000.users.jsonl").file_id
    '000000'
    """
    name = os.path.basename(path)
    compressed = name.endswith(COMPRESSED_SUFFIX)
    stem = name[: -len(COMPRESSED_SUFFIX)] if compressed else name
    stem, _, file_format = stem.rpartition(".")
    parts = [part for part in stem.split(".") if part and part != table]
    file_id = parts[-1] if parts else name
    return ParsedLoadJobFileName(table, file_id, 0, file_format, compressed)


def job_infos(files: list[dict[str, Any]], state: str, created_at: str | None, elapsed: float) -> list[LoadJobInfo]:
    """The jobs of a package's `files` in `state` (dlt's job folder name, e.g. "completed_jobs")."""
    created = pendulum.parse(created_at) if created_at else None
    return [
        LoadJobInfo(state, str(f.get("path", "")), int(f.get("bytes", 0) or 0),
                    created if isinstance(created, datetime) else None, elapsed,
                    parse_file_name(str(f.get("table", "")), str(f.get("path", ""))), None, dict(f))
        for f in files
    ]
