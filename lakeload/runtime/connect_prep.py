"""What a pipeline needs before it runs on a Spark Connect server: package data on a shared place (a remote
server's executors cannot read this machine's disk) and lakeload's code on the server (`connect_shipping`).

A server is local when its Connect URL names this host's loopback (`localhost`, `127.0.0.1`, `::1`), as the
server of `lakeload spark start` does; then the pipeline folder still holds package data. Any other host
needs `[spark] working_url` on an object store, checked before anything is extracted. A client that died
mid-step leaves its operations running on the server; the next run of the pipeline stops them first.

>>> is_loopback_url("sc://127.0.0.1:15002/;token=x"), is_loopback_url("sc://spark.example.com:443")
(True, False)
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import socket
import sys
from typing import TYPE_CHECKING, Any, TypedDict, cast
from urllib.parse import urlsplit

from lakeload.errors import WorkingUrlRequiredError
from lakeload.spark.connect_session import (
    connect_url,
    interrupt_session,
    interrupt_tag,
    is_loopback_url,
    mask_connect_url,
    opened_url,
    resolve_engine,
)
from lakeload.spark.session_kind import is_connect
from lakeload.spark.shared_session import PROCESS_TAG, is_shared

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.storage.packages import PipelineStorage
SESSION_RECORD = "connect_session.json"
logger = logging.getLogger("lakeload.spark")


class SessionRecord(TypedDict, total=False):
    """`connect_session.json`: the Connect session a run of the pipeline uses, and the process that runs it.

    Written by another process (perhaps another lakeload version): values are checked where they are used."""

    session_id: str
    server: str  # host:port of the Connect server
    pid: int
    host: str
    tag: str  # the process's operation tag on a shared session


def planned_connect_url(pipeline_name: str, session: Any) -> str | None:
    """The Connect URL the pipeline runs (or will run) on, without opening a session; None when in-process."""
    if session is None and "pyspark.sql" in sys.modules:
        from lakeload.spark.deferred_session import active_session

        session = active_session()  # what get_spark would take first
    if session is not None:
        return f"sc://{session.client.host}" if is_connect(session) else None
    return connect_url(resolve_engine(pipeline_name))


def check_shared_working(pipeline_name: str, session: Any, storage: PipelineStorage) -> None:
    """Raise `WorkingUrlRequiredError` when the pipeline runs on a remote Connect server and packages are local."""
    require_shared_working(pipeline_name, planned_connect_url(pipeline_name, session), storage)


def require_shared_working(pipeline_name: str, url: str | None, storage: PipelineStorage) -> None:
    """Raise `WorkingUrlRequiredError` when `url` names a Connect server on another host and `storage` keeps
    package data on this machine (no `[spark] working_url` on an object store)."""
    if url is None or is_loopback_url(url) or storage.working is not None:
        return
    raise WorkingUrlRequiredError(
        f"Pipeline {pipeline_name!r} runs on the Spark Connect server {mask_connect_url(url)}, whose executors "
        f"cannot read load packages in {storage.packages_root} on this machine. Set [spark] working_url (env "
        "SPARK__WORKING_URL) to a bucket every Spark host reaches (s3://, gs://, az://, abfss://) with its "
        "credentials in [spark.working_credentials]; the destination must be reachable from the server too."
    )


def prepare_session(pipeline_name: str, session: SparkSession, storage: PipelineStorage) -> None:
    """Check shared storage, stop a dead client's operations and ship lakeload's code when `session` is a Connect
    session (once per session)."""
    if not is_connect(session):
        return
    from lakeload.spark.connect_shipping import ship_lakeload

    check_shared_working(pipeline_name, session, storage)
    url = opened_url(session)
    if url is not None:
        stop_abandoned(storage.root, url, str(session.session_id), is_shared(session))  # type: ignore[attr-defined]
    ship_lakeload(session)


def _server(url: str) -> str:
    parts = urlsplit(url.split(";", 1)[0].replace("sc://", "http://", 1))
    return f"{parts.hostname}:{parts.port}"


def stop_abandoned(root: str, url: str, session_id: str, shared: bool = False) -> None:
    """Interrupt the server-side operations of a client of this pipeline that died (`kill -9`, power loss)
    without ending its Connect session, then record this session as the pipeline's.

    The record (`connect_session.json` in the pipeline folder: session id and server, no secrets) is removed
    when this process exits normally; one left behind names a session whose client never got to clean up.
    Its running operations (a load step's tasks, say) would otherwise go on beside the run that redoes them. On
    the local server's shared session (`shared`), the record also holds this process's operation tag: a dead
    client's operations are found by it, and the session stays for the clients that share it.
    """
    path = os.path.join(root, SESSION_RECORD)
    server = _server(url)
    try:
        with open(path, encoding="utf-8") as handle:
            record = cast("SessionRecord | None", json.load(handle))
    except (OSError, ValueError):
        record = None
    if isinstance(record, dict) and record.get("server") == server and _client_died(record):
        stopped = _stop_dead_client(url, record, session_id)
        if stopped:
            logger.warning("Stopped %d Spark operation(s) a previous run of this pipeline left running on %s.",
                           stopped, server)
    os.makedirs(root, exist_ok=True)
    mine = {"session_id": session_id, "server": server, "pid": os.getpid(), "host": socket.gethostname()}
    if shared:
        mine["tag"] = PROCESS_TAG
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(mine, handle)
    atexit.register(_forget, path, session_id)


def _stop_dead_client(url: str, record: SessionRecord, session_id: str) -> int:
    """Interrupt what the dead client of `record` left running: its tagged operations on a shared session (the
    session lives on for the others), or its whole session of its own."""
    if isinstance(record.get("tag"), str) and record.get("session_id"):
        return interrupt_tag(url, str(record["session_id"]), record["tag"])
    if record.get("session_id") not in (None, session_id):
        return interrupt_session(url, str(record["session_id"]))
    return 0


def _client_died(record: SessionRecord) -> bool:
    """True when the recorded client was a process on this host that no longer runs."""
    if record.get("host") != socket.gethostname() or not isinstance(record.get("pid"), int):
        return False  # another host's client (a shared pipeline folder): not ours to judge
    try:
        os.kill(record["pid"], 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _forget(path: str, session_id: str) -> None:
    """Remove the session record at a normal exit, when it still names this process and its session."""
    with contextlib.suppress(OSError, ValueError), open(path, encoding="utf-8") as handle:
        record = json.load(handle)
        if record.get("session_id") == session_id and record.get("pid") == os.getpid():  # a shared id is not enough
            os.remove(path)
