"""Executor-safe: check a normalized package file before a load publishes it into the bucket.

A package file damaged after normalize (a truncated copy, a disk that filled up, a file overwritten by hand)
would otherwise be linked or copied into the table folder as it is, the load marked complete in `_dlt_loads`,
and every later reader of the table would fail on it (DuckDB: "No magic bytes found at end of file") with
nothing telling which load brought it. So before a file is published the loader compares it with what
normalize recorded in `package.json` (its size in bytes and, for Parquet, its rows) and, for Parquet, reads
its footer: the magic bytes `PAR1` at both ends and the footer's metadata. Only the footer is read, never
the data, so the check costs a few small reads per file.

Imports only the standard library, `lakeload.errors`, `kernel.contracts` and (when a Parquet file is checked) pyarrow.
"""

from __future__ import annotations

import os

from lakeload.errors import DamagedPackageFileError
from lakeload.kernel.contracts import TPackageFile

PARQUET_MAGIC = b"PAR1"


def check_package_file(local_path: str, file: TPackageFile, load_id: str, shown_path: str | None = None) -> None:
    """Raise `DamagedPackageFileError` unless the file at `local_path` is the one normalize wrote.

    `file` is the file's entry in `package.json` (`table`, `ext`, `rows`, `bytes`); `shown_path` is the name
    the error gives the file (its package path when `local_path` is a downloaded copy).
    """
    problem = damage(local_path, file)
    if problem is not None:
        raise DamagedPackageFileError(shown_path or local_path, file.get("table", "?"), load_id, problem)


def check_package_files(package_dir: str, files: list[TPackageFile], load_id: str) -> None:
    """`check_package_file` for every file of a package on a local disk, before any of them is published."""
    for file in files:
        check_package_file(os.path.join(package_dir, file["path"]), file, load_id)


def check_listed_sizes(sizes: dict[str, int], files: list[TPackageFile], load_id: str, base: str) -> None:
    """Compare the sizes a listing of a package's working-bucket folder `base` found (`sizes`, by relative path)
    with the package's record, before any file is published (the copy tasks read each footer next)."""
    for file in files:
        listed, recorded = sizes.get(file["path"]), file.get("bytes")
        if listed is None:
            problem = "it is missing from the working bucket"
        elif recorded is not None and listed != recorded:
            problem = f"it holds {listed} bytes where normalize wrote {recorded}"
        else:
            continue
        raise DamagedPackageFileError(f"{base}/{file['path']}", file.get("table", "?"), load_id, problem)


def damage(path: str, file: TPackageFile) -> str | None:
    """What is wrong with the file at `path` compared with its `package.json` entry `file`, or None."""
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        return f"it cannot be read ({type(exc).__name__}: {exc.strerror or exc})"
    recorded = file.get("bytes")
    if recorded is not None and size != recorded:
        return f"it holds {size} bytes where normalize wrote {recorded}"
    if file.get("ext") == "parquet":
        return _parquet_damage(path, size, file.get("rows"))
    return None


def _parquet_damage(path: str, size: int, rows: int | None) -> str | None:
    """The footer check of a Parquet file: magic bytes at both ends, a footer pyarrow reads, its row count."""
    if size < 12:  # magic + footer length + magic
        return f"it holds {size} bytes, too few for a Parquet file"
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(-8, os.SEEK_END)
        tail = f.read(8)
    if head != PARQUET_MAGIC or tail[4:] != PARQUET_MAGIC:
        return "the Parquet magic bytes 'PAR1' are missing at its start or end (truncated or overwritten)"
    if int.from_bytes(tail[:4], "little") + 12 > size:
        return "its Parquet footer is longer than the file (truncated)"
    import pyarrow.parquet as pq  # only when a Parquet file is checked: loads of JSONL or CSV never need it

    try:
        metadata = pq.read_metadata(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for a damaged footer
        return f"its Parquet footer cannot be read ({type(exc).__name__}: {exc})"
    if rows is not None and metadata.num_rows != rows:
        return f"its Parquet footer counts {metadata.num_rows} rows where normalize wrote {rows}"
    return None
