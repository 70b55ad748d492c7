"""The supervisor's gateway desk (`lakeload.spark.gateway_desk`) and when a run attaches through it
(`lakeload.spark.attach`): a real Unix socket, no Spark (the attach itself is in tests/spark/test_warm_engine.py)."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark import SparkContext

from lakeload.spark import attach, gateway_desk
from lakeload.spark.connect_server import ServerState


@pytest.fixture
def desk() -> Iterator[gateway_desk.GatewayDesk]:
    opened = gateway_desk.GatewayDesk(41234, "not-shown-anywhere")
    opened.open()
    yield opened
    opened.close()


def test_the_desk_hands_the_gateway_to_this_user_through_a_private_socket(desk: gateway_desk.GatewayDesk) -> None:
    assert desk.path == gateway_desk.desk_path()
    assert stat.S_IMODE(os.stat(desk.path).st_mode) == 0o600
    answer = gateway_desk.ask_desk(desk.path)
    assert answer == gateway_desk.DeskAnswer(41234, "not-shown-anywhere", gateway_desk.code_id())
    assert "not-shown-anywhere" not in repr(answer)
    desk.close()
    assert not os.path.exists(desk.path)
    assert gateway_desk.ask_desk(desk.path) is None


def test_a_socket_left_by_a_dead_supervisor_answers_nothing_and_is_replaced(tmp_path: Path) -> None:
    path = gateway_desk.desk_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(path)
    left.close()  # the file stays, nobody listens
    assert gateway_desk.ask_desk(path, timeout=1) is None
    desk = gateway_desk.GatewayDesk(1, "s", "c")
    try:
        desk.open()
        assert gateway_desk.ask_desk(path) == gateway_desk.DeskAnswer(1, "s", "c")
    finally:
        desk.close()


def test_code_id_follows_the_modules_of_this_lakeload(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "lakeload"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    (package / "sub" / "b.py").write_text("y = 2\n")
    monkeypatch.setattr(gateway_desk, "PACKAGE_DIR", str(package))
    first = gateway_desk.code_id()
    assert gateway_desk.code_id() == first
    (package / "sub" / "notes.txt").write_text("not code")
    assert gateway_desk.code_id() == first
    later = time.time() + 5
    os.utime(package / "sub" / "b.py", (later, later))
    assert gateway_desk.code_id() != first  # an edited module: runs use Connect, whose sessions ship their code


def _engine(path: str) -> ServerState:
    return ServerState(os.getpid(), 15002, "local[*]", "spark.log", time.time(), started_by="auto", attach=path)


def test_the_socket_is_in_the_home_folder_or_a_private_temp_folder_when_that_path_is_too_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.setenv("HOME", "/h")
    assert gateway_desk.desk_path() == "/h/.lakeload/spark/engine.sock"
    monkeypatch.setenv("HOME", str(tmp_path / ("x" * 120)))
    temp = tempfile.mkdtemp(prefix="ll-", dir="/tmp")  # a short temp folder of the test's own
    request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))
    monkeypatch.setattr(gateway_desk.tempfile, "gettempdir", lambda: temp)
    long = gateway_desk.desk_path()
    assert long.startswith(f"{temp}/lakeload-{os.getuid()}/engine-") and len(long.encode()) <= 100
    monkeypatch.setenv("HOME", str(tmp_path / ("y" * 120)))
    assert gateway_desk.desk_path() != long  # one per home folder
    shared = os.path.dirname(long)
    os.makedirs(shared, mode=0o755)
    os.chmod(shared, 0o755)  # a folder others may read (umask aside)
    monkeypatch.setenv("HOME", str(tmp_path / ("x" * 120)))
    with pytest.raises(OSError, match="not private"):  # never used: the socket goes nowhere others can reach
        gateway_desk.GatewayDesk(1, "s", "c").open()
    os.chmod(shared, 0o700)
    desk = gateway_desk.GatewayDesk(1, "s", "c")
    try:
        assert desk.open() == long and gateway_desk.ask_desk(long) == gateway_desk.DeskAnswer(1, "s", "c")
    finally:
        desk.close()


def test_a_run_does_not_attach_to_a_jvm_running_other_code_or_to_no_gateway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("_gateway", "_jvm", "_active_spark_context"):  # as in a process without Spark (the worker may have one)
        monkeypatch.setattr(SparkContext, name, None)
    other = gateway_desk.GatewayDesk(1, "s", code="another-lakeload")
    other.open()
    try:
        assert attach.attached_session(_engine(other.path), {}) is None  # another checkout's JVM
    finally:
        other.close()
    gone = gateway_desk.GatewayDesk(gateway_desk_free_port(), "wrong")  # this code, but no gateway listens there
    gone.open()
    try:
        assert attach.attached_session(_engine(gone.path), {}) is None
    finally:
        gone.close()
    assert attach.attached_session(_engine(""), {}) is None  # a Connect server: nothing to attach to
    assert SparkContext._gateway is None and SparkContext._active_spark_context is None  # nothing left half-made


def gateway_desk_free_port() -> int:
    from lakeload.spark.connect_server import free_port

    return free_port()
