"""Getting a Spark session: the user's active one, or a local one set up for lakeload.

lakeload never stops a session it did not start, and starts at most one per process.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from lakeload.errors import LakeloadError, NormalizeError, SparkSetupError
from lakeload.spark import jvm_stderr, warm_engine
from lakeload.spark.class_archive import class_archive, with_archive
from lakeload.spark.connect_server import wait_for_port
from lakeload.spark.connect_session import connect_session, connect_url, resolve_engine
from lakeload.spark.connect_shipping import missing_module_hint
from lakeload.spark.errors import spark_errors, task_error
from lakeload.spark.java import JAVA_HELP, check_java
from lakeload.spark.job_progress import tracked_jobs
from lakeload.spark.kernel_code import require_kernel
from lakeload.spark.pandas_warning import import_pandas_check, map_in_arrow, pandas_check_silenced
from lakeload.spark.python_daemon import with_python_daemon
from lakeload.spark.session_kind import use_connect_mode, warn_ignored
from lakeload.spark.settings import (
    DEFAULT_MASTER,
    executors_python,
    is_local_master,
    resolve_spark_settings,
    session_conf,
    spark_log_path,
    warn_submitted,
    with_lazy_jit,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.kernel.spark.working import WorkingStore
    from lakeload.spark.connect_server import ServerState
    from lakeload.spark.settings import SparkSettings

logger = logging.getLogger("lakeload.spark")
APP_NAME = "lakeload"
_lock = threading.Lock()


def _prepare_environment(master: str, conf: Mapping[str, str]) -> None:
    # as spark-submit does (`spark.pyspark.python` first): PySpark itself only reads the environment variable
    os.environ["PYSPARK_PYTHON"] = executors_python(conf)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local_master(master):  # executors on other hosts must reach the driver on a real address
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def _submitted_conf() -> dict[str, str]:
    """Settings spark-submit gave this driver (its JVM is already up), or {} when lakeload launches Spark itself."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return {}
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return dict(SparkConf().getAll())


def get_spark(
    master: str | None = None, conf: Mapping[str, str] | None = None, pipeline_name: str | None = None
) -> SparkSession:
    """The active Spark session, or a new one set up from lakeload's configuration, with quiet logs.

    A new session takes, lowest to highest: lakeload's defaults, `[spark]` configuration (env and TOML, for
    `pipeline_name`), the `master` and `conf` arguments, and what spark-submit passed; the session time
    zone stays UTC. An active session is used as it is (a warning names configured settings it lacks).
    Without an active session or a `master` argument, `[spark] mode` may pick a Spark Connect session instead:
    on `[spark] remote` / SPARK_REMOTE, or on the local server of `lakeload spark start` (`connect_session.py`);
    with nothing configured, that server is started in the background when none runs (`warm_engine.py`).

    Example (starts Spark)::

        spark = get_spark()                       # local[*] unless configured or a session is already active
        spark = get_spark("local-cluster[2,1,1024]", {"spark.executor.memory": "512m"})
    """
    from pyspark.sql import SparkSession

    from lakeload.spark.deferred_session import active_session

    with _lock:
        settings = resolve_spark_settings(pipeline_name)
        # with settings of its own, a call finds only what pyspark calls active (a session lakeload has not made yet
        # is then made by the builder below, with those settings applied, as pyspark's getOrCreate does)
        active = active_session() if master is None and conf is None else SparkSession.getActiveSession()
        if active is not None:
            warn_ignored(active, settings)
            return active
        engine = resolve_engine(pipeline_name)
        url = connect_url(engine) if master is None else None
        local = _own_local_server(url) if url is not None else None
        if url is None and master is None and conf is None:
            local = warm_engine.engine_state(pipeline_name)  # None when none runs: it starts once this process exits
            url = local.url if local is not None else None
        if local is not None and local.attach and engine.mode == "auto" and conf is None:  # a kept JVM: attached
            attached = _attached(local, settings)
            if attached is not None:
                return attached
        if url is not None:
            quiet_pyspark_loggers(_log_file(settings.log_file))
            if local is not None and local.attach:
                wait_for_port(local)  # a kept JVM starts its Connect service after it is recorded
            session = connect_session(url, local)
            warm_engine.keep_alive(url)
            return session
        check_java()
        submitted = _submitted_conf()
        warn_submitted(settings, submitted)
        final = session_conf(settings, conf, submitted)
        master = submitted.get("spark.master") or master or settings.master or DEFAULT_MASTER
        _prepare_environment(master, final)
        if not submitted:  # spark-submit started the driver's JVM, with its own options
            final = with_python_daemon(master, with_lazy_jit(master, final, settings.lazy_jit))
        log_file = _log_file(settings.log_file)
        quiet_pyspark_loggers(log_file)
        session = _start(master, final, use_archive=settings.class_archive and not submitted)
        warm_engine.session_started(log_file)  # a first run's JVM becomes the engine when this process exits
        return session


def _attached(engine: ServerState, settings: SparkSettings) -> SparkSession | None:
    """A classic session on the warm engine's own context when it is a kept JVM running this code (`attach`)."""
    from lakeload.spark.attach import attached_session

    conf = session_conf(settings)
    _prepare_environment(engine.master, conf)  # the workers' Python: the one whose daemon the JVM runs already
    session = attached_session(engine, {key: value for key, value in conf.items() if key.startswith("spark.sql.")})
    if session is not None:
        quiet_pyspark_loggers(_log_file(settings.log_file))
        warm_engine.keep_alive(engine.url)
    return session


def _own_local_server(url: str) -> ServerState | None:
    """The local server lakeload started (`lakeload spark start`, the warm engine) when `url` is its URL."""
    from lakeload.spark.connect_server import running_server

    server = running_server()
    return server if server is not None and server.url == url.rstrip("/") else None


def _log_file(configured: str) -> str:
    log_file = spark_log_path(configured)
    os.makedirs(os.path.dirname(log_file), exist_ok=True)
    return log_file


PYSPARK_ERROR_LOGGERS = ("DataFrameQueryContextLogger", "SQLQueryContextLogger")


def quiet_pyspark_loggers(log_file: str) -> None:
    """Send PySpark's own error records (a JSON dump of every failed query) to the Spark log file, not stderr."""
    import logging

    from pyspark.logger import PySparkLogger

    from lakeload.config.log_secrets import install_secret_masking

    for name in PYSPARK_ERROR_LOGGERS:
        logger_ = PySparkLogger.getLogger(name)
        logger_.propagate = False
        for handler in list(logger_.handlers):
            logger_.removeHandler(handler)
        handler = logging.FileHandler(log_file, encoding="utf-8", delay=True)
        install_secret_masking([handler])
        logger_.addHandler(handler)


def _build(master: str, conf: Mapping[str, str]) -> SparkSession:
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    from lakeload.spark.deferred_session import DeferredSession

    options = {"spark.app.name": APP_NAME, "spark.master": master, **conf}
    try:
        if SparkContext._gateway is None:  # this process starts its JVM now: without the launcher's stderr line
            SparkContext._ensure_initialized(gateway=_launch(master, conf))
        with pandas_check_silenced():  # PySpark checks the pandas version while the context starts
            if SparkContext._active_spark_context is None and SparkSession._instantiatedSession is None:
                context = SparkContext.getOrCreate(SparkConf().setAll(list(options.items())))
                return DeferredSession(context, options)  # its SQL side is made when first used
            builder = SparkSession.builder
            for key, value in options.items():
                builder = builder.config(key, value)
            return builder.getOrCreate()
    except Exception as exc:
        raise SparkSetupError(f"Spark could not start: {exc}. {JAVA_HELP}") from exc


def _launch(master: str, conf: Mapping[str, str]) -> Any:
    """The driver's JVM gateway; what the context's start imports is imported meanwhile, while the JVM boots."""
    imports = threading.Thread(target=import_pandas_check, name="lakeload-spark-imports", daemon=True)
    imports.start()
    try:
        return jvm_stderr.launch_gateway(APP_NAME, master, conf)
    finally:
        imports.join()


def _start(master: str, conf: Mapping[str, str], use_archive: bool = False) -> SparkSession:
    """A new session; `use_archive`: with the JVM class-data archive (`class_archive`) when this process starts
    its JVM now."""
    from pyspark import SparkContext

    archive = class_archive(conf) if use_archive and SparkContext._gateway is None else None
    if archive is None:
        session = _build(master, conf)
    else:
        try:
            session = _build(master, with_archive(conf, archive))
        except SparkSetupError:
            if archive.part is not None:
                raise
            logger.info("Spark could not start with the class archive %s; starting without it", archive.path)
            archive.discard()
            session, archive = _build(master, conf), None
    if archive is not None:
        archive.finish_at_exit(SparkContext._gateway)
    session.sparkContext.setLogLevel("ERROR")
    return session


def session_for(pipeline_name: str | None, session: SparkSession | None = None) -> SparkSession:
    """`session` when given (a warning names configured settings it lacks), else `get_spark` for the pipeline."""
    if session is None:
        return get_spark(pipeline_name=pipeline_name)
    use_connect_mode(session)
    warn_ignored(session, resolve_spark_settings(pipeline_name))
    return session


T = TypeVar("T")


def run_tasks(
    spark: SparkSession,
    task: Callable[[Any, Any], T],
    payload: Any,
    items: list[Any],
    description: str,
    on_progress: Callable[[int], None] | None = None,
    working: WorkingStore | None = None,
    error: type[LakeloadError] = NormalizeError,
) -> list[T]:
    """Run `task(payload, item)` for every item, one Spark task each, and return the results in order.

    `working` is the bucket package data URLs are in (`PipelineStorage.working`); its options travel
    only inside the tasks.

    Only the tasks' small JSON results come back to the driver. A task that raised one of `lakeload.errors` makes
    this raise that class again (`spark.errors.task_error`: `DamagedPackageFileError` from a copy task, a
    `SchemaError` from normalize); any other failure of a task, or a job Spark could not run, raises `error` (the
    step's error class) with the task's own message or Spark's cause in one line. `on_progress(n)` hears of
    completed tasks.
    """
    from lakeload.kernel.spark.runner import RESULT_SCHEMA, partition_mapper, task_mapper
    from lakeload.spark.session_kind import is_connect

    require_kernel(task)
    if not items:
        return []
    n = len(items)
    with tracked_jobs(spark, description, on_progress), spark_errors(error, description):
        if is_connect(spark):  # (no RDDs through Connect)
            frame = map_in_arrow(spark.range(0, n, 1, numPartitions=n), task_mapper(task, payload, items, working), RESULT_SCHEMA)
            rows = [row[0] for row in frame.collect()]
        else:  # an RDD job: no SQL plan, ~0.7 s less for a fresh JVM's first job
            rows = spark.sparkContext.parallelize(range(n), n).mapPartitions(partition_mapper(task, payload, items, working)).collect()
    results: list[Any] = [None] * n
    for row in rows:
        decoded = orjson.loads(row)
        if "error" in decoded:
            logger.debug("task %s failed:\n%s", decoded["index"], decoded.get("trace"))
            raise task_error(decoded, description, error, missing_module_hint(decoded["error"]))
        results[decoded["index"]] = decoded["ok"]
    return results
