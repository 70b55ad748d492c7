"""Where load packages live: the pipeline folder, or `[spark] working_url` on a file system every Spark host mounts.

Executors read extracted files and write normalized ones at the paths the driver gives them, so on a
cluster those paths must exist on every host: a shared mount (NFS, ...) at the same path everywhere.

>>> packages_root("file:///mnt/shared/lakeload", "/home/me/.lakeload/pipelines/p", "p")
'/mnt/shared/lakeload/p'
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

from lakeload.config.resolver import resolve
from lakeload.errors import ConfigurationError
from lakeload.runtime.packages import EXTRACTED, NORMALIZED, PipelineStorage
from lakeload.spark.settings import is_local_master, warn_once

WORKING_URL_HELP = (
    "Set [spark] working_url (env SPARK__WORKING_URL) to an absolute path or a file:// URL of a folder that every "
    "Spark host mounts at the same path (NFS or another shared file system)."
)


def working_path(working_url: str) -> str:
    """The local folder a working URL names: an absolute path (`/mnt/shared`) or a `file://` URL.

    >>> working_path("file:///mnt/shared%20data")
    '/mnt/shared data'
    """
    url = working_url.strip()
    if os.path.isabs(os.path.expanduser(url)):
        return os.path.normpath(os.path.expanduser(url))
    parts = urlsplit(url)
    if parts.scheme == "file" and parts.netloc in ("", "localhost") and os.path.isabs(unquote(parts.path)):
        return os.path.normpath(unquote(parts.path))
    if parts.scheme and parts.scheme != "file":
        raise ConfigurationError(
            f"[spark] working_url = {working_url!r}: only shared file systems are supported as working_url for now, "
            f"not {parts.scheme}:// object stores. {WORKING_URL_HELP}"
        )
    raise ConfigurationError(f"[spark] working_url = {working_url!r} is not an absolute local path. {WORKING_URL_HELP}")


def packages_root(working_url: str | None, pipeline_root: str, pipeline_name: str) -> str:
    """The folder holding a pipeline's `load/` packages: `<working_url>/<pipeline_name>`, or the pipeline folder."""
    if not working_url:
        return pipeline_root
    return os.path.join(working_path(str(working_url)), pipeline_name)


def pipeline_storage(pipelines_dir: str, pipeline_name: str) -> PipelineStorage:
    """The storage of a pipeline, its packages under `[spark] working_url` when that is configured.

    >>> pipeline_storage(os.path.expanduser("~/.lakeload/pipelines"), "quick_start").packages_root
    """
    root = os.path.join(pipelines_dir, pipeline_name)
    working_url = resolve(("spark",), "working_url", pipeline_name, hint=str).value
    storage = PipelineStorage(root, packages_root(working_url, root, pipeline_name))
    warn_stranded_packages(storage)
    return storage


def warn_unreachable_packages(master: str | None, storage: PipelineStorage) -> None:
    """Warn once when executors on other hosts would look for packages in this host's pipeline folder."""
    if master and storage.packages_root == storage.root and not is_local_master(master):
        warn_once(
            f"Spark master {master} runs executors on other hosts, but load packages are written to "
            f"{storage.root} on this host, which those executors cannot read. {WORKING_URL_HELP}"
        )


def warn_stranded_packages(storage: PipelineStorage) -> None:
    """Warn when packages wait in the pipeline folder while working_url points elsewhere (they are not loaded)."""
    if storage.packages_root == storage.root:
        return
    local = PipelineStorage(storage.root)
    pending = local.list_packages(EXTRACTED) + local.list_packages(NORMALIZED)
    if pending:
        warn_once(
            f"{len(pending)} pending load package(s) in {os.path.join(storage.root, 'load')} are not processed because "
            f"[spark] working_url puts packages in {storage.packages_root}. Move the `load` folder there, or unset "
            "working_url to finish them first."
        )
