# The one helper of dlt's test package (dlt-hub/dlt tests/pipeline/utils.py at 58d66fceef2bf6e04a2d1b3cb52dd8134dfb65bc, Apache-2.0, see
# ../../../../NOTICE) that dlt's documentation snippets import, copied without its type import. Tool-neutral.
from typing import Any


def assert_load_info(info: Any, expected_load_packages: int = 1) -> None:
    """Assert that all load packages completed successfully."""
    # make sure we can serialize
    info.asstr(verbosity=2)
    info.asdict()
    assert len(info.loads_ids) == expected_load_packages
    # all packages loaded
    assert all(p.completed_at is not None for p in info.load_packages) is True
    # no failed jobs in any of the packages
    assert all(len(p.jobs["failed_jobs"]) == 0 for p in info.load_packages) is True
