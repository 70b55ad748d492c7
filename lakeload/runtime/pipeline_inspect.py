"""The inspecting part of `Pipeline`: its schemas, pending and completed load packages (dlt's names) read from the
working folder, and its dataset read back through DuckDB (`pipeline.sql_client()`, `pipeline.dataset()`).

>>> import os, tempfile
>>> import lakeload
>>> tmp = tempfile.TemporaryDirectory()
>>> pipeline = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem(os.path.join(tmp.name, "bucket")),
...                              dataset_name="mydata", pipelines_dir=tmp.name)
>>> pipeline.first_run, pipeline.has_pending_data, pipeline.schema_names
(True, False, [])
>>> load_id = pipeline.extract([{"id": 1}], table_name="users").loads_ids[0]
>>> pipeline.list_extracted_load_packages() == [load_id], pipeline.get_load_package_info(load_id).state
(True, 'extracted')
>>> pipeline.has_pending_data, pipeline.schema_names
(True, ['quick_start'])

Reading the dataset back (after a run loaded `users`)::

    with pipeline.sql_client() as client:
        rows = client.execute_sql("SELECT count(*) FROM users")
    pipeline.dataset().users.df()
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.errors import LoadPackageNotFoundError
from lakeload.runtime.info import PackageInfo
from lakeload.runtime.pipeline_maintenance import Maintenance
from lakeload.runtime.pipeline_settings import PipelineSettings
from lakeload.schema.schema import Schema
from lakeload.storage.packages import EXTRACTED, LOADED, NORMALIZED, PipelineStorage, read_json

if TYPE_CHECKING:
    from lakeload.sql.clients import SqlClient
    from lakeload.sql.dataset import Dataset


class Inspect:
    """What `Pipeline` shows of itself: read from its working folder `storage` and its state (kept by `maintenance`),
    and its dataset through the destination `settings` name."""

    def __init__(self, settings: PipelineSettings, storage: PipelineStorage, maintenance: Maintenance) -> None:
        self._settings = settings
        self._storage = storage
        self._maintenance = maintenance

    @property
    def first_run(self) -> bool:
        """True until a load package was loaded from this working folder (False after the first load, as dlt)."""
        return not self._storage.list_packages(LOADED)

    @property
    def has_pending_data(self) -> bool:
        """True while extracted or normalized packages wait to be normalized or loaded."""
        return bool(self._storage.list_packages(EXTRACTED) or self._storage.list_packages(NORMALIZED))

    @property
    def default_schema_name(self) -> str | None:
        """The name of the pipeline's default schema (its first), None before the first extract."""
        return self._maintenance.state.get("default_schema_name")

    @property
    def schema_names(self) -> list[str]:
        """Names of the pipeline's schemas, the default one first."""
        return list(self._maintenance.state.get("schema_names", []))

    def schema(self, name: str | None = None) -> Schema:
        """A stored schema (the default one when no name is given); a new, empty one when none is stored."""
        schema_name = name or self.default_schema_name or self._settings.pipeline_name
        return self._storage.stored_or_new_schema(schema_name)

    @property
    def schemas(self) -> dict[str, Schema]:
        """The pipeline's schemas by name (dlt's `pipeline.schemas` mapping)."""
        return {name: self.schema(name) for name in self.schema_names}

    def list_extracted_load_packages(self) -> list[str]:
        """Ids of the packages extracted and waiting for normalize, oldest first."""
        return self._storage.list_packages(EXTRACTED)

    def list_normalized_load_packages(self) -> list[str]:
        """Ids of the packages normalized and waiting for load, oldest first."""
        return self._storage.list_packages(NORMALIZED)

    def list_completed_load_packages(self) -> list[str]:
        """Ids of the packages loaded from this working folder, oldest first."""
        return self._storage.list_packages(LOADED)

    def get_load_package_info(self, load_id: str) -> PackageInfo:
        """The package `load_id` as the working folder has it: its state, schema, row counts and files."""
        return package_info(self._storage, load_id)

    def sql_client(self, schema: str | None = None) -> SqlClient:
        """SQL over the dataset through DuckDB views, like dlt's filesystem `sql_client()` (state restored first);
        on a destination with a SQL client of its own (DuckDB), that one."""
        from lakeload.sql.client import FilesystemSqlClient
        from lakeload.sql.clients import sql_client_factory

        factory = sql_client_factory(self._settings.destination)
        if factory is not None:
            self._maintenance.sync_destination()
            return factory(self._settings.destination, self._settings.pipeline_name, self._settings.dataset_name,  # type: ignore[arg-type]
                           self.schema(schema))
        config = self._settings.configuration()
        self._maintenance.sync_destination()
        client = FilesystemClient(config, self._settings.dataset_name)
        return FilesystemSqlClient(client, self.schema(schema), self._settings.layout(config), config.always_refresh_views)

    def dataset(self, schema: str | None = None) -> Dataset:
        """The dataset's tables as relations (see `Pipeline.dataset`)."""
        from lakeload.sql.dataset import Dataset

        return Dataset(self.sql_client(schema))


def package_info(storage: PipelineStorage, load_id: str) -> PackageInfo:
    """The package `load_id` of the working folder `storage` (see `Pipeline.get_load_package_info`)."""
    for stage in (LOADED, NORMALIZED):
        path = os.path.join(storage.package_dir(stage, load_id), "package.json")
        if os.path.exists(path):
            package = read_json(path)
            return PackageInfo(load_id, package["schema_name"], dict(package.get("row_counts", {})),
                               list(package.get("files", [])), state=stage, created_at=package.get("created_at"),
                               schema_update=package.get("schema_update", {}),
                               completed_at=storage.completed_at(load_id) if stage == LOADED else None)
    path = os.path.join(storage.package_dir(EXTRACTED, load_id), "manifest.json")
    if os.path.exists(path):
        return _extracted_info(load_id, read_json(path), storage.package_dir(EXTRACTED, load_id))
    raise LoadPackageNotFoundError(
        f"No load package {load_id!r} is extracted, normalized or loaded in {storage.packages_root}. "
        "List the ids there with list_extracted_load_packages(), list_normalized_load_packages() or "
        "list_completed_load_packages()."
    )


def _extracted_info(load_id: str, manifest: dict[str, Any], package_dir: str) -> PackageInfo:
    """An extracted package: items per root table and its extracted files, from its manifest (their sizes from the
    working folder)."""
    items: dict[str, int] = {}
    files = []
    for split in manifest.get("splits", []):
        table = split.get("root_table", "")
        items[table] = items.get(table, 0) + int(split.get("items", 0))
        local = os.path.join(package_dir, str(split.get("path", "")))
        size = os.path.getsize(local) if split.get("path") and os.path.isfile(local) else 0
        files.append({"table": table, "path": split.get("path"), "rows": split.get("items", 0), "bytes": size})
    return PackageInfo(load_id, manifest["schema_name"], items, files, state=EXTRACTED, created_at=manifest.get("created_at"))
