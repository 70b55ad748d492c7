"""A DuckDB database that cannot be opened or written (its folder missing, a read-only file) fails the load with a
`DatabaseUnavailableError` (a `LakeloadError`) naming the file and the fix, not DuckDB's `IOException`; the package
stays pending. (A file another process holds: `test_duckdb_destination.py`.)"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

import lakeload
from lakeload.errors import DatabaseUnavailableError, LakeloadError

pytestmark = [pytest.mark.usefixtures("spark")]


@pytest.fixture
def read_only_file(tmp_path: Path) -> Iterator[Path]:
    """A database file this process cannot write (root writes through permissions: then an immutable file)."""
    path = tmp_path / "ro.duckdb"
    duckdb.connect(str(path)).close()
    path.chmod(0o444)
    immutable = False
    if os.geteuid() == 0:
        immutable = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
        if not immutable:
            pytest.skip("running as root without chattr: no file is read-only to this process")
    try:
        yield path
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=False)
        path.chmod(0o644)


@pytest.mark.parametrize("case", ["missing folder", "read-only file"])
def test_a_database_that_cannot_be_written_is_a_named_error(case: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    path = "/nonexistent/dir/x.duckdb" if case == "missing folder" else str(request.getfixturevalue("read_only_file"))
    p = lakeload.pipeline("unwritable", destination=lakeload.destinations.duckdb(path), dataset_name="mydata",
                          pipelines_dir=str(tmp_path / "p"))
    with pytest.raises(DatabaseUnavailableError) as failed:
        p.run([{"id": 1}], table_name="t")
    assert isinstance(failed.value, LakeloadError) and not isinstance(failed.value, duckdb.Error)
    message = str(failed.value)
    assert path in message and "Fix:" in message
    assert ("/nonexistent/dir does not exist" in message) if case == "missing folder" else ("read-only" in message)
    assert p.list_normalized_load_packages()  # nothing lost: the package waits for a writable database
