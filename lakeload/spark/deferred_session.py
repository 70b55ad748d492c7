"""A classic Spark session whose SQL side is made when something first uses it.

Starting Spark in a process has three parts: the JVM, the SparkContext, and the SQL session on top of it (its
catalog, analyzer and settings: about a second of a cold start's three on 2 cores). A small run of records
needs only the first two: its normalize and load tasks are Spark jobs on the context. So when lakeload starts
Spark in its own process, it makes the context and hands out a `DeferredSession`: a real `SparkSession`
whose JVM session is created on first use (a DataFrame, `conf`, `sql`, `read` ...), exactly as
`SparkSession.builder.getOrCreate()` would have made it, with the same options. Until then it is pyspark's
instantiated session, so `SparkSession.builder.getOrCreate()` and `SparkSession.active()` in the user's script
return it (and make it).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from pyspark import SparkContext
from pyspark.sql import SparkSession

from lakeload.spark.pandas_warning import pandas_check_silenced

logger = logging.getLogger("lakeload.spark")
_OWN = frozenset({"_sc", "_jsc", "_jvm", "_options", "_made", "_making", "_isolated"})  # set by `__init__`
_SESSION_CLASS = "org.apache.spark.sql.classic.SparkSession"


class DeferredSession(SparkSession):
    """A `SparkSession` on `context` whose JVM session is made on first use, with `options` (see the module).

    `isolated`: the context is shared with other processes (`attach`): the JVM session made is a new one of this
    process's own, never the JVM's default or active one."""

    def __init__(self, context: SparkContext, options: Mapping[str, Any], isolated: bool = False) -> None:
        from pyspark.errors.exceptions.captured import install_exception_handler

        self._sc = context  # no call to the JVM here
        self._jsc = context._jsc
        self._jvm = context._jvm
        self._options = dict(options)
        self._made: Any = None
        self._making = threading.RLock()
        self._isolated = isolated
        install_exception_handler()  # Spark's errors as pyspark's exceptions, as a made session has them
        SparkSession._instantiatedSession = self
        SparkSession._activeSession = self

    @property  # type: ignore[override]
    def _jsparkSession(self) -> Any:
        return self._made if self._made is not None else self._make()

    @_jsparkSession.setter
    def _jsparkSession(self, value: Any) -> None:
        self._made = value

    @property
    def made(self) -> bool:
        """Whether the JVM session exists yet."""
        return self._made is not None

    def __getattr__(self, name: str) -> Any:
        """What `SparkSession.__init__` sets besides the JVM session (e.g. its profiler collector): made first."""
        if name.startswith("__") or name in _OWN:
            raise AttributeError(name)
        self._make()
        return object.__getattribute__(self, name)

    def _make(self) -> Any:
        with self._making:
            if self._made is None and self._isolated:
                self._make_isolated()
            if self._made is None:
                logger.debug("making the SQL side of the Spark session")
                SparkSession._instantiatedSession = None  # so that pyspark registers it as the active one
                try:
                    with pandas_check_silenced():
                        SparkSession.__init__(self, self._sc, options=self._options)
                finally:
                    if SparkSession._instantiatedSession is None:
                        SparkSession._instantiatedSession = self
        return self._made

    def _make_isolated(self) -> None:
        """A JVM session of this process's own on the shared context: a new session on the default one's shared
        state (its catalog and cache) when there is one, else a new session; pyspark's registration of the
        default and active sessions in the JVM is left out (they are the engine's)."""
        logger.debug("making this process's own SQL session on the shared Spark context")
        sessions = getattr(self._jvm, _SESSION_CLASS)
        default = sessions.getDefaultSession()
        if default.isDefined() and not default.get().sparkContext().isStopped():
            made = default.get().newSession()
        else:
            made = sessions(self._sc._jsc.sc(), self._options)
        with pandas_check_silenced():  # `_instantiatedSession` is this one: pyspark registers nothing in the JVM
            SparkSession.__init__(self, self._sc, jsparkSession=made, options=self._options)


def active_session() -> SparkSession | None:
    """pyspark's active session, or a `DeferredSession` not made yet (pyspark asks the JVM, which has none)."""
    session = SparkSession._instantiatedSession
    if isinstance(session, DeferredSession) and (not session.made or session._isolated) and session._sc._jsc is not None:
        return session  # (an isolated session is active in no JVM thread: pyspark would not find it)
    return SparkSession.getActiveSession()
