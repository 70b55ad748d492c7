"""Spark Connect sessions: which engine a pipeline runs on (`[spark] mode`, `[spark] remote`) and what a
Connect session offers in place of the driver's JVM (no `sparkContext`).

```toml
[spark]
mode = "auto"                             # auto (default) | local | remote
remote = "sc://spark.example.com:443/;use_ssl=true;token=..."   # or the SPARK_REMOTE variable
```

`auto`: a configured `remote` URL, else the local server of `lakeload spark start` when it runs, else an
in-process session as before. `local`: always an in-process session. `remote`: the `remote` URL, else the
local server; an error when there is neither. Every parameter of a Connect URL after the host (`token`,
`user_id`, ...) is masked wherever lakeload shows the URL.

>>> mask_connect_url("sc://host:443/;use_ssl=true;token=abc")
'sc://host:443/;use_ssl=***;token=***'
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from lakeload.config.credentials import MASK
from lakeload.config.resolver import resolve
from lakeload.errors import ConfigurationError, SparkSetupError
from lakeload.spark.session_kind import apply_session_settings, with_session_id

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.spark.connect_server import ServerState

MODES = ("auto", "local", "remote")
DEFAULT_MODE = "auto"
SPARK_REMOTE = "SPARK_REMOTE"  # Spark's own variable for a Connect URL
_PARAM = re.compile(r"(;[^;=/]+=)([^;]*)")
# Parallelism lakeload assumes on a Connect server that sets no `spark.default.parallelism` and no local master
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
INTERRUPT_TIMEOUT = 30.0  # seconds to wait for a dead client's operations to stop
_opened: dict[str, str] = {}  # session id -> the Connect URL lakeload opened it on


def mask_connect_url(url: str) -> str:
    """`url` with the value of every `;name=value` parameter masked (tokens, user ids).

    >>> mask_connect_url("sc://127.0.0.1:15002")
    'sc://127.0.0.1:15002'
    """
    return _PARAM.sub(lambda m: m.group(1) + MASK, url)


@dataclass(frozen=True)
class EngineSettings:
    """Which engine the pipeline runs on, and where each choice came from. `remote`'s repr is masked."""

    mode: str = DEFAULT_MODE
    mode_source: str | None = None
    remote: str | None = None
    remote_source: str | None = None

    def __repr__(self) -> str:
        remote = mask_connect_url(self.remote) if self.remote else None
        return (f"EngineSettings(mode={self.mode!r}, mode_source={self.mode_source!r}, remote={remote!r}, "
                f"remote_source={self.remote_source!r})")


def resolve_engine(pipeline_name: str | None = None, environ: Mapping[str, str] | None = None) -> EngineSettings:
    """`[spark] mode` and the Connect URL: `SPARK__REMOTE` > `SPARK_REMOTE` > `[spark] remote` in TOML.

    >>> resolve_engine(None, {"SPARK_REMOTE": "sc://localhost:15002"}).remote
    'sc://localhost:15002'
    """
    env = os.environ if environ is None else environ
    mode = resolve(("spark",), "mode", pipeline_name, hint=str, environ=env)
    mode_value = str(mode.value or DEFAULT_MODE).strip().lower()
    if mode_value not in MODES:
        raise ConfigurationError(
            f"[spark] mode = {mode.value!r} (from {mode.source}) is not one of {', '.join(MODES)}. Use \"auto\" "
            "(a running `lakeload spark start` server or a remote URL, else in-process), \"local\" or \"remote\"."
        )
    remote = resolve(("spark",), "remote", pipeline_name, hint=str, environ=env)
    url, source = remote.value, remote.source
    from_env = source is not None and source.startswith("environment variable")
    if env.get(SPARK_REMOTE) and not from_env:
        url, source = env[SPARK_REMOTE], f"environment variable {SPARK_REMOTE}"
    if url is not None and not str(url).startswith("sc://"):
        raise ConfigurationError(
            f"The Spark Connect URL from {source} must start with sc:// (sc://host:port/;token=...); got "
            f"{mask_connect_url(str(url))!r}."
        )
    return EngineSettings(mode_value, mode.source, str(url) if url else None, source)


def connect_url(engine: EngineSettings) -> str | None:
    """The Connect URL to run on for `engine`, or None for an in-process session."""
    from lakeload.spark.connect_server import running_server

    if engine.mode == "local":
        return None
    if engine.remote:
        return engine.remote
    server = running_server()
    if server is not None:
        return server.url
    if engine.mode == "remote":
        raise SparkSetupError(
            f"[spark] mode = \"remote\" (from {engine.mode_source}) but no Spark Connect URL is configured and no "
            "local server runs. Set [spark] remote = \"sc://host:port\" (or SPARK_REMOTE), or run `lakeload spark start`."
        )
    return None


def is_loopback_url(url: str) -> bool:
    """True when the Connect URL `url` names a server on this host's loopback interface (a local server).

    >>> is_loopback_url("sc://127.0.0.1:15002/;token=x"), is_loopback_url("sc://spark.example.com:443")
    (True, False)
    """
    host = urlsplit(url.split(";", 1)[0].replace("sc://", "http://", 1)).hostname or ""
    return host.lower() in LOOPBACK_HOSTS


def connect_session(url: str, local_server: ServerState | None = None) -> SparkSession:
    """A Spark Connect session on `url`, with lakeload's session settings (UTC, Arrow, microsecond Parquet times).
    On `local_server` (the local server lakeload started, whose URL is `url`), the server session every run of
    this lakeload shares (`shared_session`), unless this process already has a Connect session (its script's own,
    which pyspark's `getOrCreate` returns too)."""
    from pyspark.sql import SparkSession

    from lakeload.spark.connect_server import check_connect_client
    from lakeload.spark.pandas_warning import pandas_check_silenced
    from lakeload.spark.shared_session import open_shared

    check_connect_client()
    try:
        with pandas_check_silenced():
            if local_server is not None and _process_session() is None:
                session = open_shared(local_server)
            else:
                session = SparkSession.builder.remote(url).getOrCreate()
                apply_session_settings(session)  # the first call to the server
    except Exception as exc:  # pyspark's and grpc's errors may quote the URL: only a masked summary is shown
        from lakeload.config.log_secrets import mask_secrets

        cause = mask_connect_url(mask_secrets(str(exc).strip().splitlines()[0] if str(exc).strip() else ""))
        raise SparkSetupError(
            f"Could not open a Spark Connect session on {mask_connect_url(url)}: {type(exc).__name__} {cause}. "
            "Check that the server runs (`lakeload spark status`) and the URL and token are right."
        ) from None
    _opened[str(session.session_id)] = url  # type: ignore[attr-defined]
    return session


def _process_session() -> SparkSession | None:
    """The Connect session this process already has (a thread's active one, else the default one), as pyspark's
    `getOrCreate` would return it; None when there is none."""
    import sys

    if "pyspark.sql.connect.session" not in sys.modules:
        return None
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    try:
        return ConnectSession.active()  # type: ignore[return-value]
    except Exception:  # pyspark's NO_ACTIVE_OR_DEFAULT_SESSION
        return None


def opened_url(session: Any) -> str | None:
    """The Connect URL lakeload opened `session` on (None for a session the user opened)."""
    return _opened.get(str(getattr(session, "session_id", "")))


def interrupt_session(url: str, session_id: str, timeout: float = INTERRUPT_TIMEOUT) -> int:
    """Interrupt every operation of the server session `session_id` (a dead client's) and release it; returns how
    many operations were running. Waits until the server reports none left, at most `timeout` seconds."""
    return _interrupt(url, session_id, lambda session: session.interruptAll(), release=True, timeout=timeout)


def interrupt_tag(url: str, session_id: str, tag: str, timeout: float = INTERRUPT_TIMEOUT) -> int:
    """Interrupt the operations tagged `tag` (a dead client's) in the server session `session_id`, which other
    clients may share and keep using; returns how many were running. Waits until none is left, at most `timeout`."""
    return _interrupt(url, session_id, lambda session: session.interruptTag(tag), release=False, timeout=timeout)


def _interrupt(url: str, session_id: str, interrupt: Callable[[Any], list[str]], release: bool, timeout: float) -> int:
    """Call `interrupt` on a handle of the server session `session_id` until it reports nothing running (at most
    `timeout` seconds), then close the handle, releasing the session too when `release`; how many it interrupted."""
    import time

    from pyspark.sql.connect.session import SparkSession as ConnectSession

    handle = ConnectSession(connection=with_session_id(url, session_id))
    interrupted: set[str] = set()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            running = interrupt(handle)
            if not running:
                break
            interrupted.update(running)
            time.sleep(0.2)
    finally:
        if release:
            with contextlib.suppress(Exception):
                handle.client.release_session()
        with contextlib.suppress(Exception):
            handle.client.close()
    return len(interrupted)
