"""Spark made ready while `run()` extracts: the session started and its Python workers warmed in the background.

Extracting records is Python work on the driver that needs no Spark, and normalize cannot start before it
has files; Spark's session start (~2-6 s) and its first Python job (workers forked, pyarrow and lakeload's
executor modules imported, ~1-2 s) would otherwise come after it. `run()` starts a `WarmUp` before extract:
a thread gets the pipeline's session (the same, lock-guarded `Pipeline.spark` normalize uses), then runs one
tiny task per core that imports the executor modules. Python workers are reused, so normalize's tasks find
them started and their imports done. Whatever fails here is only logged: the step that needs the session
then meets the same failure and raises it as usual.

`[spark] warm_up = false` (env `SPARK__WARM_UP=false`) turns this off.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = logging.getLogger("lakeload.spark")
_warmed: set[str] = set()  # sessions whose workers were warmed once already (by application or Connect id)
_lock = threading.Lock()


def _session_key(spark: SparkSession) -> str:
    session_id = getattr(spark, "session_id", None)  # a Connect session
    if session_id is not None:
        return f"connect:{session_id}"
    return f"classic:{spark.conf.get('spark.app.id', '')}"


def warm_workers(spark: SparkSession) -> bool:
    """Run one task per core that imports lakeload's executor modules, once per session; True when it ran."""
    from lakeload.errors import LakeloadError
    from lakeload.spark.connect_session import default_parallelism
    from lakeload.spark.executor_runner import warm_imports
    from lakeload.spark.session import run_tasks

    key = _session_key(spark)
    with _lock:
        if key in _warmed:
            return False
        _warmed.add(key)
    cores = max(1, default_parallelism(spark))
    run_tasks(spark, warm_imports, None, list(range(cores)), "Warming up Spark's Python workers", error=LakeloadError)
    return True


class WarmUp:
    """The session started and its workers warmed in a background thread; `join()` waits for it.

    The thread of an in-process session is no daemon: a JVM is never cut off in the middle of its start. One
    that opens a Connect session is (a server that does not answer must not hold this process at its exit).
    """

    def __init__(self, session: Callable[[], SparkSession], daemon: bool = False) -> None:
        self._session = session
        self._thread = threading.Thread(target=self._run, name="lakeload-warm-up", daemon=daemon)
        self._thread.start()

    @property
    def daemon(self) -> bool:
        return self._thread.daemon

    def _run(self) -> None:
        try:
            warm_workers(self._session())
        except BaseException as exc:  # the step that needs the session raises it properly
            logger.debug("Spark warm-up did not finish: %s: %s", type(exc).__name__, exc)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the warm-up to end."""
        self._thread.join(timeout)


def _import_first(on_connect: bool) -> None:
    """Import here what the thread imports: pyspark's package imports are circular, and two threads importing
    them at once can meet a partially initialized module."""
    import pyspark.sql  # noqa: F401

    if on_connect:
        with contextlib.suppress(ImportError):  # no Connect client packages: the step names the install command
            import pyspark.sql.connect.session  # noqa: F401

    import lakeload.spark.executor_runner  # noqa: F401
    import lakeload.spark.session  # noqa: F401


def _active_session() -> SparkSession | None:
    if "pyspark.sql" not in sys.modules:  # nothing imported pyspark yet: no session is active
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def _on_connect(pipeline_name: str, given: SparkSession | None) -> bool:
    from lakeload.errors import LakeloadError
    from lakeload.runtime.connect_prep import planned_connect_url

    try:
        return planned_connect_url(pipeline_name, given) is not None
    except LakeloadError:  # (no server for mode "remote": the step raises it)
        return True


@contextmanager
def warming(
    pipeline_name: str, session: Callable[[], SparkSession], given: SparkSession | None, start: bool, done: bool = False
) -> Iterator[None]:
    """Spark readied in the background during the block, unless `done` (the pipeline has its session already) or
    `[spark] warm_up = false`. With `start`, the session is started when there is none; without, only a session
    `given` or active is warmed. A block that fails waits for an in-process session's start to end."""
    from lakeload.spark.settings import resolve_spark_settings

    warm_up = None
    there = given is not None or _active_session() is not None
    if not done and resolve_spark_settings(pipeline_name).warm_up and (start or there):
        on_connect = _on_connect(pipeline_name, given)
        _import_first(on_connect)
        warm_up = WarmUp(session, daemon=on_connect)
    try:
        yield
    except BaseException:
        if warm_up is not None and not warm_up.daemon:
            warm_up.join()
        raise
