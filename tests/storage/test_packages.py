"""Package folders move between states atomically; a killed process leaves recoverable packages."""

from __future__ import annotations

from pathlib import Path

from lakeload.storage.packages import (
    EXTRACTED,
    EXTRACTING,
    NORMALIZED,
    NORMALIZING,
    PipelineStorage,
    new_load_id,
)


def test_load_ids_look_like_dlt_and_increase() -> None:
    first, second = new_load_id(), new_load_id()
    assert float(first) <= float(second) and first.count(".") == 1 and float(first) > 1.7e9


def test_recover_drops_incomplete_and_keeps_complete(tmp_path: Path) -> None:
    storage = PipelineStorage(str(tmp_path))
    for stage, load_id in ((EXTRACTING, "1.1"), (NORMALIZING, "1.2"), (EXTRACTED, "1.2"), (EXTRACTED, "1.3"), (NORMALIZED, "1.3")):
        Path(storage.package_dir(stage, load_id)).mkdir(parents=True)
    storage.recover()
    assert storage.list_packages(EXTRACTING) == [] and storage.list_packages(NORMALIZING) == []
    assert storage.list_packages(EXTRACTED) == ["1.2"]  # redone from extracted
    assert storage.list_packages(NORMALIZED) == ["1.3"]  # its extracted copy was already consumed


def test_move_is_a_rename(tmp_path: Path) -> None:
    storage = PipelineStorage(str(tmp_path))
    folder = Path(storage.package_dir(EXTRACTED, "2.5"))
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "f").write_text("x")
    moved = Path(storage.move("2.5", EXTRACTED, NORMALIZED))
    assert (moved / "data" / "f").read_text() == "x" and not folder.exists()
    assert storage.list_packages(NORMALIZED) == ["2.5"]
