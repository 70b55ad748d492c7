"""The JVM class-data archive of the sessions lakeload starts (`lakeload.spark.class_archive`), with real JVMs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lakeload.spark.class_archive import MAGIC, archive_key, class_archive, with_archive

CHILD = Path(__file__).with_name("class_archive_child.py")
REPO = Path(__file__).resolve().parents[2]


def _start(cache: Path, **env: str) -> dict[str, object]:
    environ = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(REPO), **env}
    done = subprocess.run([sys.executable, str(CHILD)], env=environ, capture_output=True, text=True, timeout=300, cwd=cache)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "EOFError" not in done.stderr  # nothing spills at exit
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["result"] == [2, 4, 6]
    return result


def test_the_archive_is_keyed_by_the_classpath_and_written_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert archive_key({}) == archive_key({"spark.sql.shuffle.partitions": "4"})
    assert archive_key({}) != archive_key({"spark.jars": "/x/extra.jar"})
    first = class_archive({})
    assert first is not None and first.part is not None and not os.path.exists(first.path)
    assert "-XX:ArchiveClassesAtExit=" in with_archive({"spark.driver.extraJavaOptions": "-Da=b"}, first)[
        "spark.driver.extraJavaOptions"
    ]
    Path(first.part).write_bytes(b"partial")  # another process is writing it: this one starts without
    assert class_archive({}) is None
    old = time.time() - 3600
    os.utime(first.part, (old, old))  # left by a process that died: removed, and written again
    again = class_archive({})
    assert again is not None and again.part is not None and not os.path.exists(first.part)


@pytest.mark.slow
def test_sessions_start_from_the_archive_the_first_one_wrote_and_survive_a_damaged_one(tmp_path: Path) -> None:
    first = _start(tmp_path)
    assert any(a.startswith("-XX:ArchiveClassesAtExit=") for a in first["jvm_args"])  # type: ignore[union-attr]
    [archive] = (tmp_path / "lakeload" / "jvm").glob("spark-*.jsa")
    assert archive.read_bytes()[:4] == MAGIC and not list(archive.parent.glob("*.part"))

    second = _start(tmp_path)
    assert f"-XX:SharedArchiveFile={archive}" in second["jvm_args"]  # type: ignore[operator]

    archive.chmod(0o644)
    archive.write_bytes(archive.read_bytes()[: 2 << 20])  # damaged: the JVM cannot map it
    damaged = _start(tmp_path)
    assert not any("SharedArchiveFile" in a for a in damaged["jvm_args"])  # type: ignore[union-attr]
    assert not archive.exists()  # removed: the next session writes a new one


@pytest.mark.parametrize(("setting", "expected"), [(None, True), ("false", False)])
def test_class_archive_setting_decides_whether_a_new_jvm_uses_one(
    setting: str | None, expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[spark] class_archive = false` starts the JVM without the archive (the start itself is stubbed: no
    second JVM in this process; the JVM side is the slow test above)."""
    from pyspark.sql import SparkSession

    from lakeload.spark import session

    if setting is not None:
        monkeypatch.setenv("SPARK__CLASS_ARCHIVE", setting)
    started: dict[str, bool] = {}
    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))
    monkeypatch.setattr(session, "_prepare_environment", lambda master, conf: None)  # PYSPARK_PYTHON, ... stay as they are
    monkeypatch.setattr(session, "quiet_pyspark_loggers", lambda log_file: None)
    monkeypatch.setattr(session, "_start", lambda master, conf, use_archive=False: started.update(archive=use_archive))
    session.get_spark("local[1]")
    assert started == {"archive": expected}
