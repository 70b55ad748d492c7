"""Fixtures of the load tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def other_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder (not yet created) on a file system other than `tmp_path`'s: no hard link reaches it."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev or not os.access(shm, os.W_OK):
        pytest.skip("needs a writable file system other than the temporary folder's")
    folder = Path(os.path.realpath(shm)) / f"lakeload-test-{os.getpid()}"
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
