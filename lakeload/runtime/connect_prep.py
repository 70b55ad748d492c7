"""What a pipeline needs before it runs on a Spark Connect server: package data on a shared place (a remote
server's executors cannot read this machine's disk) and lakeload's code on the server (`connect_shipping`).

A server is local when its Connect URL names this host's loopback (`localhost`, `127.0.0.1`, `::1`), as the
server of `lakeload spark start` does; then the pipeline folder still holds package data. Any other host
needs `[spark] working_url` on an object store, checked before anything is extracted.

>>> is_loopback_url("sc://127.0.0.1:15002/;token=x"), is_loopback_url("sc://spark.example.com:443")
(True, False)
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from lakeload.errors import WorkingUrlRequiredError
from lakeload.spark.connect_session import connect_url, is_connect, mask_connect_url, resolve_engine

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.runtime.packages import PipelineStorage

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback_url(url: str) -> bool:
    """True when the Connect URL `url` names a server on this host's loopback interface."""
    host = urlsplit(url.split(";", 1)[0].replace("sc://", "http://", 1)).hostname or ""
    return host.lower() in LOOPBACK_HOSTS


def planned_connect_url(pipeline_name: str, session: Any) -> str | None:
    """The Connect URL the pipeline runs (or will run) on, without opening a session; None when in-process."""
    if session is None and "pyspark.sql" in sys.modules:
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession()  # what get_spark would take first
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
    """Check shared storage and ship lakeload's code when `session` is a Connect session (once per session)."""
    if not is_connect(session):
        return
    from lakeload.spark.connect_shipping import ship_lakeload

    check_shared_working(pipeline_name, session, storage)
    ship_lakeload(session)
