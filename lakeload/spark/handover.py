"""The first run's Spark handed over as the warm engine when its process exits.

A first run (no engine running) starts Spark in its own process; when it exits, the warm engine starts
(`warm_engine`). A new Connect server takes seconds to start, and a run started the moment the first one ends
waited for it (4-5x dlt's time). But the first run's JVM is already up, its classes loaded and JIT-compiled: so
at exit that JVM is kept alive and becomes the engine instead. What keeps a driver JVM pyspark launched alive is
its standard input (it exits when that closes): the exiting process passes the pipe's write end, the supervisor
lock and the JVM's output pipes to the supervisor it starts (`warm_engine.spawn_supervisor`), and the gateway's
port and secret through the supervisor's standard input (never its command line or environment). The
supervisor connects to the JVM's gateway, records the JVM as the engine with the socket on which it hands the
gateway to later runs (`gateway_desk`; those runs attach to the JVM's own context, `attach`), and a few seconds
later starts Spark Connect's service in it on 127.0.0.1 (`SparkConnectService.start`, the service pyspark's own
`SparkConnectServer` runs) for Connect clients; from then on it is the warm engine like any other: stopped when
idle, by `lakeload spark stop`, or when its supervisor dies (its standard input closes).

A JVM that cannot be adopted (the gateway does not answer, the context was stopped) is stopped, and the
supervisor starts a Connect server of its own as before.

>>> Handover.from_json(Handover(41, 9, "s3cret", "local[*]", "/tmp/spark.log", "", "").to_json()).pid
41
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from dataclasses import asdict, dataclass
from typing import IO, Any

from lakeload.errors import SparkSetupError
from lakeload.spark import connect_server as server
from lakeload.spark.gateway_desk import GatewayDesk, gateway_client

logger = logging.getLogger("lakeload.spark")
ADOPT_TIMEOUT = 60.0
CONNECT_DELAY = 5.0  # seconds after the engine is recorded (see `adopt`)


@dataclass(frozen=True)
class Handover:
    """What the supervisor needs to adopt a JVM: sent from the exiting process through a pipe (it holds a secret)."""

    pid: int
    gateway_port: int
    gateway_secret: str
    master: str
    log_file: str
    archive: str  # the class archive the JVM writes when it ends ("" for none; `class_archive`)
    archive_part: str

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Handover:
        return cls(**json.loads(text))


def this_jvm(log_file: str) -> tuple[Handover, int, tuple[int, ...]] | None:
    """The JVM this process launched for its own local Spark, alive and not stopped: what to hand over, the write
    end of its standard input and the read ends of its output pipes; None when there is none to hand over."""
    from pyspark import SparkContext

    from lakeload.spark import class_archive, jvm_stderr

    context, gateway = SparkContext._active_spark_context, SparkContext._gateway
    proc = vars(gateway).get("proc") if gateway is not None else None  # (py4j answers any other name with a JVM member)
    if context is None or context._jsc is None or proc is None or proc.poll() is not None or proc.stdin is None:
        return None
    if not str(context.master or "").startswith("local"):
        return None
    parameters = getattr(gateway, "java_parameters", None) or getattr(gateway, "gateway_parameters", None)
    if parameters is None or not getattr(parameters, "auth_token", None):
        return None
    archive = class_archive.pending_archive()
    handover = Handover(proc.pid, int(parameters.port), str(parameters.auth_token), str(context.master), log_file,
                        archive.path if archive else "", (archive.part or "") if archive else "")
    return handover, proc.stdin.fileno(), jvm_stderr.output_fds()


def drain(fds: tuple[int, ...], target: IO[str]) -> None:
    """Copy what the adopted JVM writes to its output pipes to `target` (the supervisor's log) from now on."""
    from lakeload.spark.jvm_stderr import forward

    for fd in fds:
        reader = os.fdopen(fd, "rb")
        threading.Thread(target=forward, args=(reader, target), name=f"lakeload-jvm-output-{fd}", daemon=True).start()


def adopt(handover: Handover, started_by: str, idle_seconds: float) -> server.ServerState:
    """Record the handed-over JVM as the running engine, runs attaching to it through its gateway (`attach`), and
    start Spark Connect's service in it on 127.0.0.1 `CONNECT_DELAY` seconds later, in the background (a run started
    the moment the first one ended does not share the CPU with it; a Connect client waits for its port).

    Raises `SparkSetupError` when the JVM cannot be adopted (the caller stops it and starts a server instead)."""
    try:
        gateway = gateway_client(handover.gateway_port, handover.gateway_secret)  # as pyspark connected to it
        context = gateway.jvm.org.apache.spark.SparkContext.getOrCreate()  # py4j connects on the first call
        stopped = context.isStopped()
    except Exception as exc:  # py4j's own errors: the JVM is gone or does not take the secret
        raise SparkSetupError(f"The Spark JVM {handover.pid} could not be reached to keep it as the engine: {exc}") from exc
    if stopped:
        with contextlib.suppress(Exception):
            gateway.close()
        raise SparkSetupError(f"The Spark JVM {handover.pid} cannot be kept as the engine: its Spark context was stopped")
    port = server.default_or_free_port()
    desk = GatewayDesk(handover.gateway_port, handover.gateway_secret)
    state = server.ServerState(handover.pid, port, handover.master, handover.log_file, time.time(), handover.archive,
                               handover.archive_part, started_by, idle_seconds, attach=desk.open())
    server.write_state(state)
    threading.Thread(target=_connect_later, args=(gateway, port, handover.pid), name="lakeload-connect-start",
                     daemon=True).start()
    return state


def _connect_later(gateway: Any, port: int, pid: int) -> None:
    time.sleep(CONNECT_DELAY)
    try:
        _start_connect(gateway.jvm, port)
        logger.info("Spark Connect's service listens on %s:%s in the engine's JVM %s", server.HOST, port, pid)
    except Exception as exc:  # the engine still serves the runs that attach; Connect clients find no port
        logger.warning("Spark Connect could not start in the engine's JVM %s: %s", pid, str(exc).splitlines()[0][:300])
    finally:
        with contextlib.suppress(Exception):
            gateway.close()


def _start_connect(jvm: Any, port: int) -> None:
    """Spark Connect's service on 127.0.0.1:`port` in the JVM of `jvm`, once it listens."""
    context = jvm.org.apache.spark.SparkContext.getOrCreate()
    context.conf().set("spark.connect.grpc.binding.address", server.HOST)
    context.conf().set("spark.connect.grpc.binding.port", str(port))
    session = jvm.org.apache.spark.sql.SparkSession.builder().getOrCreate()  # made now if the run needed none
    session.catalog().clearCache()  # what the first run cached is not kept for the runs to come
    jvm.org.apache.spark.sql.connect.service.SparkConnectService.start(context)
    deadline = time.monotonic() + ADOPT_TIMEOUT
    while not server.port_answers(port):
        if time.monotonic() > deadline:
            raise SparkSetupError(f"its Connect service did not listen on {server.HOST}:{port}")
        time.sleep(0.05)
