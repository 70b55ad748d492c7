"""Where load packages live: the pipeline folder, `[spark] working_url` on a file system every Spark host
mounts, or (data files only) `working_url` on an object store.

Executors read extracted files and write normalized ones at the paths the driver gives them, so on a
cluster those paths must exist on every host: a shared mount (NFS, ...) at the same path everywhere, or a
bucket (`s3://`, `gs://`, `az://`, `abfss://`, `memory://`) every host reaches with the credentials of
`[spark.working_credentials]` (the fields of the filesystem destination's credentials for that protocol;
env `SPARK__WORKING_CREDENTIALS__AWS_ACCESS_KEY_ID`, ...), plus `[spark] working_kwargs` /
`working_client_kwargs` for fsspec. Those credentials travel only inside Spark task payloads.

>>> packages_root("file:///mnt/shared/lakeload", "/home/me/.lakeload/pipelines/p", "p")
'/mnt/shared/lakeload/p'
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

from lakeload.config.bucket_credentials import fsspec_options
from lakeload.config.credentials import Credentials
from lakeload.config.resolver import resolve, resolve_section
from lakeload.destinations.impl.filesystem.configuration import as_dict
from lakeload.errors import ConfigurationError
from lakeload.kernel.spark.working import WorkingStore
from lakeload.spark.settings import is_local_master, warn_once
from lakeload.storage.packages import EXTRACTED, NORMALIZED, PipelineStorage

DEFAULT_PIPELINES_DIR = os.path.join("~", ".lakeload", "pipelines")  # pipelines' working folders, as dlt's ~/.dlt/pipelines
OBJECT_STORES = ("s3", "gs", "gcs", "az", "abfs", "abfss", "azure", "memory")
WORKING_URL_HELP = (
    "Set [spark] working_url (env SPARK__WORKING_URL) to an absolute path or a file:// URL of a folder that every "
    "Spark host mounts at the same path (NFS or another shared file system), or to a bucket URL "
    "(s3://, gs://, az://, abfss://) with its credentials in [spark.working_credentials]."
)


def is_object_store(working_url: str | None) -> bool:
    """A working_url naming a bucket rather than a folder.

    >>> is_object_store("s3://bucket/work"), is_object_store("/mnt/shared")
    (True, False)
    """
    return bool(working_url) and urlsplit(str(working_url).strip()).scheme.lower() in OBJECT_STORES


def working_store(working_url: str, pipeline_name: str) -> WorkingStore:
    """The bucket data files of `pipeline_name` go to, `<working_url>/<pipeline_name>`, with its fsspec options."""
    url = working_url.strip().rstrip("/")
    protocol = urlsplit(url).scheme.lower()
    if not urlsplit(url).netloc and protocol != "memory":
        raise ConfigurationError(f"[spark] working_url = {working_url!r} names no bucket. {WORKING_URL_HELP}")
    section = resolve_section(("spark",), "working_credentials", pipeline_name, None)
    credentials = (
        Credentials(section.fields, section.native, section.sources, native_source=section.native_source)
        if section.is_set else None
    )
    kwargs = as_dict(resolve(("spark",), "working_kwargs", pipeline_name, hint=dict), "working_kwargs")
    client_kwargs = as_dict(resolve(("spark",), "working_client_kwargs", pipeline_name, hint=dict), "working_client_kwargs")
    options = fsspec_options(protocol, credentials, kwargs, client_kwargs, url)
    return WorkingStore(f"{url}/{pipeline_name}", options)


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
            f"[spark] working_url = {working_url!r}: {parts.scheme}:// is not supported as working_url. {WORKING_URL_HELP}"
        )
    raise ConfigurationError(f"[spark] working_url = {working_url!r} is not an absolute local path. {WORKING_URL_HELP}")


def packages_root(working_url: str | None, pipeline_root: str, pipeline_name: str) -> str:
    """The folder holding a pipeline's `load/` packages: `<working_url>/<pipeline_name>`, or the pipeline folder."""
    if not working_url:
        return pipeline_root
    return os.path.join(working_path(str(working_url)), pipeline_name)


def pipeline_storage(pipelines_dir: str, pipeline_name: str) -> PipelineStorage:
    """The storage of a pipeline, its packages under `[spark] working_url` when that is configured.

    >>> pipeline_storage("/home/me/.lakeload/pipelines", "quick_start").packages_root   # no working_url set
    '/home/me/.lakeload/pipelines/quick_start'
    """
    root = os.path.join(pipelines_dir, pipeline_name)
    working_url = resolve(("spark",), "working_url", pipeline_name, hint=str).value
    if is_object_store(working_url):
        return PipelineStorage(root, working=working_store(str(working_url), pipeline_name))
    storage = PipelineStorage(root, packages_root(working_url, root, pipeline_name))
    warn_stranded_packages(storage)
    return storage


def warn_unreachable_packages(master: str | None, storage: PipelineStorage) -> None:
    """Warn once when executors on other hosts would look for packages in this host's pipeline folder."""
    remote = storage.working is not None or storage.packages_root != storage.root
    if master and not remote and not is_local_master(master):
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
