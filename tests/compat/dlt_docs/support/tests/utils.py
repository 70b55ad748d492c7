# The one helper of dlt's test package (dlt-hub/dlt tests/utils.py at 58d66fceef2bf6e04a2d1b3cb52dd8134dfb65bc, Apache-2.0, see ../../../NOTICE) that
# dlt's documentation snippets import: where a snippet's bucket goes. Not a snippet; tool-neutral.
import os

DLT_TEST_STORAGE_ROOT = "DLT_TEST_STORAGE_ROOT"
PYTEST_XDIST_WORKER = "PYTEST_XDIST_WORKER"
STORAGE_ROOT_PREFIX = "_storage"


def get_test_worker_id() -> str:
    return os.environ.get(PYTEST_XDIST_WORKER, "gw0")


def get_test_storage_root() -> str:
    return os.environ.get(DLT_TEST_STORAGE_ROOT, f"{STORAGE_ROOT_PREFIX}_{get_test_worker_id()}")
