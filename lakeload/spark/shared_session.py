"""One Spark Connect server session for every run on lakeload's own local server.

A fresh Connect session costs a small run most of its time on the server: the session's Python workers start and
import lakeload anew (its zip is a session artifact), about 0.5 s of a 10-record run. So every process that runs on
the local server lakeload started (`lakeload spark start`, or the warm engine) joins one server session, whose id
is derived from the server (pid, port, start time) and from the lakeload zip it ships: its Python workers stay up
from one run to the next, and a client with other lakeload code gets a session of its own. A URL the user
configured (`[spark] remote`) keeps a session per process: that server is not ours to share.

What stays per process on a shared session:

- every operation it starts carries its process tag (`PROCESS_TAG`, added to each request by a session hook), so
  the next run of a pipeline whose client died interrupts that client's operations only (`interruptTag`, see
  `lakeload.runtime.connect_prep`), never a neighbour's;
- `stop()` closes the client and leaves the server session to the others (`release_session_on_close`).

A shared session the server has closed (it expired, or a client outside lakeload released it) is replaced by the
next generation's id.

Example (`state` of the running local server, `connect_server.running_server()`)::

    session = open_shared(state)          # the same server session in every process with this lakeload
"""

from __future__ import annotations

import atexit
import contextlib
import os
import uuid
from typing import TYPE_CHECKING, Any, cast

from lakeload.spark.session_kind import with_session_id

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.spark.connect_server import ServerState

PROCESS_TAG = f"lakeload-client-{uuid.uuid4().hex[:16]}"
GENERATIONS = 32  # closed shared sessions passed over before giving up sharing
_NAMESPACE = uuid.UUID("5d0c6f0e-9b1a-4c33-8f57-6b7a1e2f4c90")
_CLOSED = "INVALID_HANDLE.SESSION_CLOSED"
_shared: set[str] = set()  # ids of the sessions this process opened as shared


def shared_session_id(state: ServerState, code: str, generation: int = 0) -> str:
    """The server session every client with lakeload `code` (its zip's name) joins on the server `state`.

    >>> from lakeload.spark.connect_server import ServerState
    >>> len(shared_session_id(ServerState(4242, 15002, "local[*]", "log", 1.0), "lakeload-0.1.0-ab.zip"))
    36
    """
    return str(uuid.uuid5(_NAMESPACE, f"{state.pid}/{state.port}/{state.started_at!r}/{code}/{generation}"))


def is_shared(session: Any) -> bool:
    """True for a session this process joined as the local server's shared one."""
    return str(getattr(session, "session_id", "")) in _shared


def _tag_hook(_session: Any) -> Any:
    """A session hook that adds `PROCESS_TAG` to every plan this process executes, from any thread."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    class ProcessTag(ConnectSession.Hook):
        def on_execute_plan(self, request: Any) -> Any:
            if PROCESS_TAG not in request.tags:
                request.tags.append(PROCESS_TAG)
            return request

    return ProcessTag()


def _closed(exc: BaseException) -> bool:
    condition = getattr(exc, "getCondition", None)
    return (condition() if callable(condition) else None) == _CLOSED or _CLOSED in str(exc)


def open_shared(state: ServerState, code: str | None = None) -> SparkSession:
    """The shared session on the local server `state`, made this process's active one, with lakeload's settings.

    Raises what pyspark raises when the server cannot be reached (the caller turns it into `SparkSetupError`).
    """
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    from lakeload.spark.connect_shipping import package_archive
    from lakeload.spark.session_kind import apply_session_settings

    code = code or os.path.basename(package_archive())
    last: BaseException | None = None
    for generation in range(GENERATIONS):
        url = with_session_id(state.url, shared_session_id(state, code, generation))
        os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"  # as pyspark's builder does for a remote session
        builder = ConnectSession.builder.remote(url)
        builder._registerHook(_tag_hook)  # pyspark's own hook point on Connect
        session = cast("SparkSession", builder.create())  # what pyspark's builder returns for a remote URL
        session.release_session_on_close = False  # type: ignore[attr-defined]  # others use it too
        try:
            apply_session_settings(session)  # the first call to the server
        except Exception as exc:
            session.stop()
            if not _closed(exc):
                raise
            last = exc
            continue
        _shared.add(str(session.session_id))  # type: ignore[attr-defined]
        atexit.register(_close_at_exit, session)  # runs before pyspark's own exit hook (registered earlier)
        return session
    raise RuntimeError(f"{GENERATIONS} shared sessions on the server were closed") from last


def _close_at_exit(session: SparkSession) -> None:
    """Close this process's client of the shared session when the process exits, so that pyspark's exit hook makes
    no call to the server (its ML cache cleanup retries for minutes when the engine was stopped meanwhile). The
    server session stays for the other clients (`release_session_on_close` is off)."""
    with contextlib.suppress(Exception):
        session.stop()


def warm_up(state: ServerState, most_tasks: int = 8) -> tuple[int, str]:
    """Start the shared session's Python workers on the new server `state` before a run needs them: one small task
    per slot (`kernel.spark.warm`; lakeload is shipped with it); returns how many tasks ran, and the session's id."""
    from lakeload.kernel.spark.warm import warm_worker
    from lakeload.spark.pandas_warning import map_in_arrow
    from lakeload.spark.session_kind import default_parallelism

    session = open_shared(state)
    tasks = max(1, min(most_tasks, default_parallelism(session)))
    frame = map_in_arrow(session.range(0, tasks, 1, tasks), warm_worker, "id long")
    return int(frame.count()), str(session.session_id)  # type: ignore[attr-defined]


def main() -> int:
    """`python -m lakeload.spark.shared_session`: warm up the running local server's shared session (the warm
    engine's supervisor starts it in the background once the server answers)."""
    import logging

    from lakeload.spark.connect_server import running_server

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(process)d %(message)s")
    state = running_server()
    if state is None:
        return 1
    try:
        tasks, session_id = warm_up(state)
    except Exception as exc:  # the engine stopped meanwhile, say: a run starts the workers itself then
        logging.getLogger("lakeload.spark").info("warm-up of %s skipped: %s", state.url,
                                                 (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300])
        return 1
    logging.getLogger("lakeload.spark").info("warmed %d Python worker task(s) of %s in session %s", tasks, state.url,
                                             session_id)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
