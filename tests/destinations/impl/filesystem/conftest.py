"""Registering lakeload's SFTP filesystem is process-wide: tests here leave fsspec's registry as they found it."""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import fsspec
import pytest


@pytest.fixture(autouse=True)
def restore_fsspec_registry() -> Iterator[None]:
    before = {p: fsspec.registry.get(p) for p in ("sftp", "ssh")}
    yield
    for protocol, cls in before.items():
        if cls is None:
            importlib.import_module("fsspec.registry")._registry.pop(protocol, None)
        else:
            fsspec.register_implementation(protocol, cls, clobber=True)
