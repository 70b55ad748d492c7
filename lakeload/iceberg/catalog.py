"""Driver side: the Iceberg catalog a dataset's Iceberg tables are registered in, from dlt's configuration keys.

```toml
[iceberg_catalog]
iceberg_catalog_name = "default"          # dlt's keys, dlt's defaults
iceberg_catalog_type = "sql"              # "sql" or "rest"
[iceberg_catalog.iceberg_catalog_config]  # given to pyiceberg's catalog as it is
uri = "postgresql+psycopg2://lake@127.0.0.1:5432/catalog"
warehouse = "s3://bucket/lake"
```

Which catalog, as dlt 1.31 picks it: the `iceberg_catalog_config` table when it is set; else a catalog of that name
in pyiceberg's own configuration (`.pyiceberg.yaml`, `PYICEBERG_CATALOG__<NAME>__...`); else the embedded catalog:
an SQLite catalog in memory whose truth is the bucket, as dlt's. Each table's newest metadata file
(`<table>/metadata/<version>-<uuid>.metadata.json`) is what the table is; the embedded catalog registers it
before every read and every commit, under a lock of the table's metadata folder on a local bucket, so that two
processes committing at once on this machine never both write the same version (one fails and retries).

Every catalog reads and writes the bucket through lakeload's own filesystem of it (`BucketFileIO`: the
bucket's credentials and retries as configured for the destination, never written into the catalog's
properties), except a REST catalog, whose FileIO is what its `iceberg_catalog_config` says. A table that
the catalog does not know but whose metadata is in the bucket (written by dlt with its embedded catalog, or
by another catalog) is registered from its newest metadata file.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakeload.config.resolver import resolve
from lakeload.errors import ConfigurationError, IcebergCatalogError, MissingDependencyError

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table

    from lakeload.destinations.impl.filesystem.client import FilesystemClient

logger = logging.getLogger("lakeload.load")
SECTION = ("iceberg_catalog",)
EMBEDDED = "embedded"  # the kind of the catalog lakeload makes when none is configured
METADATA_FILE = re.compile(r"^(\d+)-.*\.metadata\.json$")
LOCK_FILE = ".lakeload-commit.lock"


@dataclass(frozen=True)
class CatalogSettings:
    """`[iceberg_catalog]` as resolved: the catalog's name, type and its pyiceberg properties (None: not set)."""

    name: str = "default"
    type: str = "sql"
    config: dict[str, Any] | None = None

    def __repr__(self) -> str:  # its config may hold a database password or a REST token
        return f"CatalogSettings(name={self.name!r}, type={self.type!r})"


def resolve_catalog_settings(pipeline_name: str | None = None) -> CatalogSettings:
    """`[iceberg_catalog]` from the configuration (env `ICEBERG_CATALOG__ICEBERG_CATALOG_TYPE`, ...).

    >>> resolve_catalog_settings("no_such_pipeline")
    CatalogSettings(name='default', type='sql')
    """
    name = resolve(SECTION, "iceberg_catalog_name", pipeline_name).value or "default"
    kind = str(resolve(SECTION, "iceberg_catalog_type", pipeline_name).value or "sql").lower()
    if kind not in ("sql", "rest"):
        raise ConfigurationError(
            f"[iceberg_catalog] iceberg_catalog_type is {kind!r}; lakeload (as dlt) takes 'sql' or 'rest'."
        )
    config = resolve(SECTION, "iceberg_catalog_config", pipeline_name, secret=False).value
    if isinstance(config, str):
        import orjson

        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            raise ConfigurationError("[iceberg_catalog] iceberg_catalog_config is not a JSON object.") from None
    if config is not None and not isinstance(config, dict):
        raise ConfigurationError("[iceberg_catalog] iceberg_catalog_config must be a table of pyiceberg catalog properties.")
    return CatalogSettings(str(name), kind, dict(config) if config else None)


def require_pyiceberg() -> None:
    """Raise a `MissingDependencyError` naming the extra when pyiceberg is not installed."""
    try:
        import pyiceberg  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError('Iceberg tables need pyiceberg: pip install "lakeload[iceberg]"') from exc


def newest_metadata(client: FilesystemClient, table_dir: str) -> str | None:
    """The fsspec path of the newest `*.metadata.json` in `<table_dir>/metadata` (highest version, then name), or
    None when there is none."""
    folder = posixpath.join(table_dir, "metadata")
    try:
        names = [posixpath.basename(p) for p in client.fs.ls(folder, detail=False)]
    except FileNotFoundError:
        return None
    versions = [(int(m.group(1)), n) for n in names if (m := METADATA_FILE.match(n))]
    return posixpath.join(folder, max(versions)[1]) if versions else None


@contextlib.contextmanager
def table_lock(client: FilesystemClient, table_dir: str) -> Iterator[None]:
    """Hold the commit lock of a table of a local bucket (a file lock in its metadata folder); nothing elsewhere."""
    if not client.config.is_local:
        yield
        return
    folder = os.path.join(table_dir, "metadata")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, LOCK_FILE), "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class DatasetCatalog:
    """The catalog of one dataset's Iceberg tables (namespace = the dataset name), opened for one load or read."""

    def __init__(self, client: FilesystemClient, pipeline_name: str | None = None) -> None:
        require_pyiceberg()
        self.client = client
        self.namespace = client.dataset_name
        self.settings = resolve_catalog_settings(pipeline_name)
        self.kind, self.catalog = _open(self.settings, client)

    @property
    def embedded(self) -> bool:
        return self.kind == EMBEDDED

    def identifier(self, table_name: str) -> tuple[str, str]:
        return (self.namespace, table_name)

    def table_dir(self, table_name: str) -> str:
        """The fsspec path of a table's folder (`<dataset>/<table>`, as dlt lays Iceberg tables out)."""
        return self.client.path(table_name)

    def location(self, table_name: str) -> str:
        """The table's location URI (`file:///...`, `s3://bucket/...`) as its metadata records it."""
        return str(self.client.fs.unstrip_protocol(self.table_dir(table_name)))

    def load(self, table_name: str) -> Table | None:
        """The table as the catalog has it now, registered from its newest metadata in the bucket when the catalog
        does not know it (or, embedded, knows an older one); None when the bucket holds no metadata of it."""
        from pyiceberg.exceptions import NoSuchTableError

        newest = newest_metadata(self.client, self.table_dir(table_name))
        try:
            table = self.catalog.load_table(self.identifier(table_name))
        except NoSuchTableError:
            table = None
        except Exception as exc:
            raise self.error(exc, f"load Iceberg table '{table_name}' from") from None
        if newest is None:
            return table
        newest_uri = str(self.client.fs.unstrip_protocol(newest))
        if table is not None and (not self.embedded or table.metadata_location == newest_uri):
            return table
        return self._register(table_name, newest_uri, replace=table is not None)

    def _register(self, table_name: str, metadata_uri: str, replace: bool) -> Table:
        identifier = self.identifier(table_name)
        try:
            self.ensure_namespace()
            if replace:
                self.catalog.drop_table(identifier)  # the embedded catalog's entry only: no file is deleted
            return self.catalog.register_table(identifier, metadata_uri)
        except Exception as exc:
            raise self.error(exc, f"register Iceberg table '{table_name}' ({metadata_uri}) in") from None

    def ensure_namespace(self) -> None:
        self.catalog.create_namespace_if_not_exists(self.namespace)

    @contextlib.contextmanager
    def committing(self, table_name: str) -> Iterator[None]:
        """Around a commit: the embedded catalog holds the table's lock and registers its newest metadata first,
        so the commit is checked against what the bucket holds now (another process may have committed)."""
        if not self.embedded:
            yield
            return
        with table_lock(self.client, self.table_dir(table_name)):
            self.load(table_name)
            yield

    def error(self, exc: BaseException, action: str) -> IcebergCatalogError:
        """An `IcebergCatalogError` for a failed catalog call, naming the catalog, without its secrets."""
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        for secret in _secrets(self.settings.config or {}):
            text = text.replace(secret, "***")
        return IcebergCatalogError(
            f"Cannot {action} the Iceberg catalog {self.describe()}: {text}. Check [iceberg_catalog] in your "
            "configuration (and that its database or server is reachable)."
        )

    def describe(self) -> str:
        if self.embedded:
            return "(embedded: the newest metadata of each table in the bucket)"
        return f"'{self.settings.name}' ({self.settings.type})"


def _secrets(config: dict[str, Any]) -> list[str]:
    from lakeload.config.credentials import is_secret_key

    found = [str(v) for k, v in config.items() if is_secret_key(str(k)) and v]
    uri = str(config.get("uri") or "")
    password = re.search(r"://[^:/@]+:([^@]+)@", uri)
    return found + ([password.group(1)] if password else [])


def _open(settings: CatalogSettings, client: FilesystemClient) -> tuple[str, Catalog]:
    """(kind, catalog): the configured catalog, pyiceberg's own configuration of that name, or the embedded one."""
    from lakeload.iceberg.file_io import BucketSqlCatalog

    config = settings.config
    if config is None:
        config = _pyiceberg_config(settings.name)
    try:
        if config is None:
            warehouse = client.fs.unstrip_protocol(client.dataset_path)
            return EMBEDDED, BucketSqlCatalog(client, settings.name, exclusive=True,
                                              properties={"uri": "sqlite:///:memory:", "warehouse": warehouse})
        kind = str(config.get("type") or settings.type).lower()
        if kind == "sql":
            properties = {k: str(v) for k, v in config.items() if k != "type"}
            return "sql", BucketSqlCatalog(client, settings.name, properties=properties)
        from pyiceberg.catalog import load_catalog

        return kind, load_catalog(settings.name, **{k: str(v) for k, v in config.items()})
    except (ConfigurationError, MissingDependencyError):
        raise
    except Exception as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        for secret in _secrets(config or {}):
            text = text.replace(secret, "***")
        raise IcebergCatalogError(
            f"Cannot open the Iceberg catalog '{settings.name}' ({settings.type}): {text}. Check [iceberg_catalog] "
            "iceberg_catalog_config (uri, warehouse) and that its database or server is reachable."
        ) from None


def _pyiceberg_config(name: str) -> dict[str, Any] | None:
    """The catalog `name` as pyiceberg's own configuration gives it (`.pyiceberg.yaml`, `PYICEBERG_CATALOG__...`)."""
    try:
        from pyiceberg.utils.config import Config

        found = Config().get_catalog_config(name)
    except Exception:  # an unreadable .pyiceberg.yaml: as none (the embedded catalog)
        logger.warning("pyiceberg's configuration could not be read; using the embedded Iceberg catalog")
        return None
    return dict(found) if found else None
