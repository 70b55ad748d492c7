"""The cycle collector during extract (lakeload/extract/collector.py): older objects frozen, young ones still
collected, everything restored afterwards, also after a failure and with extracts in two threads."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest

import lakeload
from lakeload.extract import collector


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_block_freezes_older_objects_and_restores_the_collector() -> None:
    before = gc.get_threshold()
    with collector.young_objects_only():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] >= collector.YOUNG_THRESHOLD
        first, second = Node(), Node()
        first.other, second.other = second, first  # a garbage cycle made during extract ...
        gone = weakref.ref(first)
        del first, second
        gc.collect()
        assert gone() is None  # ... is still collected
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_failure_and_threads_restore_it_once_the_last_block_ends() -> None:
    before = gc.get_threshold()
    with pytest.raises(ValueError), collector.young_objects_only():
        raise ValueError("resource failed")
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
    inside, release = threading.Event(), threading.Event()

    def other_extract() -> None:
        with collector.young_objects_only():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other_extract)
    with collector.young_objects_only():
        thread.start()
        inside.wait(10)
    assert gc.get_threshold()[0] >= collector.YOUNG_THRESHOLD  # the other extract still runs
    release.set()
    thread.join(10)
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_extract_runs_with_older_objects_frozen(tmp_path: Path) -> None:
    seen: list[int] = []

    def rows():  # type: ignore[no-untyped-def]
        seen.append(gc.get_freeze_count())
        yield [{"id": i} for i in range(3)]

    pipeline = lakeload.pipeline("gc_extract", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                                 pipelines_dir=str(tmp_path / "pipes"))
    pipeline.extract(lakeload.resource(rows, name="items"))
    assert seen and seen[0] > 0 and gc.get_freeze_count() == 0
