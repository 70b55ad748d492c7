"""What kind of Spark session lakeload runs on, read from the session itself: classic or Connect, its master,
its parallelism, and the configured settings it lacks (a session lakeload did not start). Used by every module
that takes a session, so it imports nothing of lakeload's Spark plumbing but its settings.

Example (a classic session started by `get_spark()`)::

    is_connect(spark), session_master(spark)   # (False, 'local[*]')
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from lakeload.spark.settings import (
    DEFAULT_CONF,
    MASTER_KEY,
    PINNED_CONF,
    SparkSettings,
    is_local_master,
    warn_once,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CONNECT_DEFAULT_PARALLELISM = 8  # a Connect server's parallelism when neither its conf nor its master tells


def is_connect(session: Any) -> bool:
    """True for a Spark Connect session (its driver is on a server: no `sparkContext`, no JVM here)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def with_session_id(url: str, session_id: str) -> str:
    """`url` with a `session_id` parameter.

    >>> with_session_id("sc://127.0.0.1:15002", "abc")
    'sc://127.0.0.1:15002/;session_id=abc'
    """
    if ";" in url:
        return f"{url};session_id={session_id}"
    return f"{url.rstrip('/')}/;session_id={session_id}"


def apply_session_settings(session: SparkSession) -> None:
    """Set lakeload's SQL settings on a Connect session it opened (a Connect session cannot set others)."""
    for key, value in {**DEFAULT_CONF, **PINNED_CONF}.items():
        if key.startswith("spark.sql."):
            session.conf.set(key, value)


def use_connect_mode(session: Any) -> None:
    """Make pyspark's functions (`F.col`, ...) build Connect expressions, as pyspark does for a session it opens."""
    if is_connect(session):
        os.environ.setdefault("SPARK_CONNECT_MODE_ENABLED", "1")


def session_master(session: SparkSession) -> str:
    """The master URL of `session`'s driver (asked through the session's conf on Connect)."""
    if is_connect(session):
        return str(session.conf.get("spark.master", "") or "")
    return str(session.sparkContext.master)


def executors_on_this_host(session: SparkSession) -> bool:
    """True when `session`'s executors run in or beside this process (a classic session on a local master), so
    that they and the driver see the same local disks. Not said of Connect: its server may be anywhere."""
    return not is_connect(session) and is_local_master(session_master(session))


def default_parallelism(session: SparkSession) -> int:
    """How many tasks `session` runs at once: Spark's default parallelism (on Connect, from its settings)."""
    if not is_connect(session):
        return int(session.sparkContext.defaultParallelism)
    configured = session.conf.get("spark.default.parallelism", None)
    if configured:
        return int(configured)
    match = re.fullmatch(r"local\[(\d+|\*)(?:,\d+)?\]", session_master(session))
    if match:
        return int(match.group(1)) if match.group(1) != "*" else (os.cpu_count() or 1)
    return CONNECT_DEFAULT_PARALLELISM


def _running_value(session: SparkSession, key: str) -> str | None:
    from pyspark.errors import PySparkException

    value = None if is_connect(session) else session.sparkContext.getConf().get(key)
    if value is not None:
        return value
    try:
        return session.conf.get(key)  # SQL settings: the session's value or Spark's default
    except PySparkException:  # neither set nor defined with a default
        return None


def ignored_settings(session: SparkSession, settings: SparkSettings) -> list[str]:
    """Configured keys whose value differs from what the running `session` has."""
    ignored = []
    if settings.master is not None and settings.master != session_master(session):
        ignored.append(MASTER_KEY)
    ignored += [key for key, value in settings.conf.items() if _running_value(session, key) != value]
    return ignored


def warn_ignored(session: SparkSession, settings: SparkSettings) -> None:
    """One warning naming the configured settings a session lakeload did not start leaves unapplied."""
    ignored = ignored_settings(session, settings)
    if ignored:
        warn_once(
            "lakeload runs on a Spark session it did not start (passed as spark=, or already active) and never "
            f"changes a running session's settings, so these configured ones are ignored: {', '.join(ignored)}. "
            "Set them where that session is created, or let lakeload start the session."
        )
