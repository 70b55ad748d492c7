"""The pipeline working folder: state, schemas and load packages on disk.

```
<pipelines_dir>/<pipeline_name>/
  state.json                     pipeline state
  schemas/<schema>.schema.json   the current schema of each source
  load/extracting/<load_id>/     being extracted (incomplete; dropped on restart)
  load/extracted/<load_id>/      manifest.json + data/ (items as typed JSONL or Parquet)
  load/normalizing/<load_id>/    being normalized (incomplete; redone from extracted/)
  load/normalized/<load_id>/     package.json + data/ (files in the destination format)
  load/loaded/<load_id>/         package.json of completed loads (data removed)
```

Every state change is a directory rename, so a process killed at any point leaves each package in
exactly one complete state (or an incomplete one that is redone). With `[spark] working_url` set to a
shared folder, the `load/` folders live under `<working_url>/<pipeline_name>/` instead (where every Spark
host can read them); state and schemas stay in the pipeline folder.

With `working_url` on an object store, package metadata (stage folders, manifest.json, package.json) stays
in the pipeline folder and only data files go to the bucket, at `<working_url>/<pipeline_name>/<load_id>/
extracted/data/...` and `.../normalized/data/...`: paths in the manifest are relative to that data base, so
stage renames never move data. Discarding, completing or dropping a package deletes its bucket data too.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from typing import Any, cast

import orjson
import pendulum

from lakeload.destinations.impl.filesystem import state_files
from lakeload.destinations.state_types import PipelineState
from lakeload.errors import WorkingFolderCorruptedError
from lakeload.kernel.filesystem.safe_paths import check_schema_name
from lakeload.kernel.spark.working import WorkingStore, remove_tree
from lakeload.schema.schema import Schema
from lakeload.storage.manifest import ExtractManifest, NormalizedPackage

EXTRACTING, EXTRACTED, NORMALIZING, NORMALIZED, LOADED = (
    "extracting",
    "extracted",
    "normalizing",
    "normalized",
    "loaded",
)
COMPLETED_FILE = "completed_at"  # in a loaded package: when its load completed (ISO timestamp)


def new_load_id() -> str:
    """A load id as dlt makes them: the current unix time as a float, as a string ("1795290972.5539668")."""
    return str(time.time())


def write_json_atomic(path: str, value: Any) -> None:
    """Write JSON to `path` through a temporary file and a rename."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_json(path: str) -> Any:
    with open(path, "rb") as f:
        return orjson.loads(f.read())


@dataclass
class PipelineStorage:
    """Access to one pipeline's working folder (`root`) and its load packages (under `packages_root`).

    >>> storage = PipelineStorage("~/.lakeload/pipelines/p", packages_root="/mnt/shared/lakeload/p")

    `working` (an object store) makes data files live under `working.url` (see the module docstring).
    """

    root: str
    packages_root: str = ""
    working: WorkingStore | None = None

    def __post_init__(self) -> None:
        self.root = os.path.abspath(os.path.expanduser(self.root))
        self.packages_root = os.path.abspath(os.path.expanduser(self.packages_root)) if self.packages_root else self.root

    # -- state and schemas -------------------------------------------------------------------------
    @property
    def state_path(self) -> str:
        return os.path.join(self.root, "state.json")

    def load_state(self) -> PipelineState | None:
        """The saved state; datetimes, dates and decimals come back typed (dlt's typed JSON, see `save_state`).

        A file that is not a JSON object raises `WorkingFolderCorruptedError`, naming it."""
        if not os.path.exists(self.state_path):
            return None
        state = self._read(self.state_path, "state")
        if not isinstance(state, dict):
            raise WorkingFolderCorruptedError(os.path.basename(self.root), self.state_path, "state")
        return cast(PipelineState, state_files.untyped_values(state))

    def _read(self, path: str, what: str) -> Any:
        try:
            return read_json(path)
        except (orjson.JSONDecodeError, UnicodeDecodeError) as exc:
            raise WorkingFolderCorruptedError(os.path.basename(self.root), path, what) from exc

    def save_state(self, state: PipelineState) -> None:
        """Save `state` as dlt saves its `state.json`: typed JSON, so an incremental's datetime stays a datetime."""
        write_json_atomic(self.state_path, state_files.typed_values(state))

    def state_mark(self) -> tuple[int, int, int] | None:
        """Changes whenever state.json is saved again (inode, mtime, size); None when there is none."""
        try:
            stat = os.stat(self.state_path)
        except FileNotFoundError:
            return None
        return stat.st_ino, stat.st_mtime_ns, stat.st_size

    def schema_path(self, name: str) -> str:
        """Where schema `name` is kept; a name that would leave `schemas/` (e.g. read from a bucket) is refused."""
        return os.path.join(self.root, "schemas", f"{check_schema_name(name)}.schema.json")

    def load_schema(self, name: str) -> Schema | None:
        path = self.schema_path(name)
        if not os.path.exists(path):
            return None
        data = self._read(path, f"schema '{name}'")
        try:
            return Schema.from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # JSON, but no schema
            raise WorkingFolderCorruptedError(os.path.basename(self.root), path, f"schema '{name}'") from exc

    def stored_or_new_schema(self, name: str) -> Schema:
        """The stored schema `name`, or a new, empty one of that name when none is stored."""
        return self.load_schema(name) or Schema(name)

    def save_schema(self, schema: Schema) -> None:
        write_json_atomic(self.schema_path(schema.name), schema.to_dict())

    def wipe(self) -> None:
        """Remove the whole working folder and the packages folder (what `pipeline.drop()` does)."""
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.packages_root, ignore_errors=True)
        if self.working is not None:
            remove_tree(self.working.url, self.working)

    # -- packages ----------------------------------------------------------------------------------
    def package_dir(self, stage: str, load_id: str) -> str:
        return os.path.join(self.packages_root, "load", stage, load_id)

    def data_base(self, stage: str, load_id: str) -> str:
        """What a package's data paths (`data/...`) are relative to: its folder, or its bucket prefix."""
        if self.working is None:
            return self.package_dir(stage, load_id)
        part = "extracted" if stage in (EXTRACTING, EXTRACTED) else "normalized"
        return f"{self.working.url}/{load_id}/{part}"

    def _drop_data(self, stage: str, load_id: str) -> None:
        if self.working is not None:
            remove_tree(self.data_base(stage, load_id), self.working)

    def normalized_package(self, load_id: str) -> tuple[str, NormalizedPackage]:
        """The data base of a normalized package (see `data_base`) and its `package.json` (files, schema, state)."""
        return self.data_base(NORMALIZED, load_id), self.package_json(NORMALIZED, load_id)

    def package_json(self, stage: str, load_id: str) -> NormalizedPackage:
        """The `package.json` of a package in `stage` (normalized or loaded): what normalize recorded."""
        return cast(NormalizedPackage, read_json(os.path.join(self.package_dir(stage, load_id), "package.json")))

    def manifest_json(self, load_id: str) -> ExtractManifest:
        """The `manifest.json` of an extracted package: what extract wrote, for normalize."""
        return cast(ExtractManifest, read_json(os.path.join(self.package_dir(EXTRACTED, load_id), "manifest.json")))

    def list_packages(self, stage: str) -> list[str]:
        """Load ids in `stage`, oldest first."""
        folder = os.path.join(self.packages_root, "load", stage)
        if not os.path.isdir(folder):
            return []
        return sorted((d for d in os.listdir(folder) if not d.startswith(".")), key=float)

    def move(self, load_id: str, from_stage: str, to_stage: str) -> str:
        """Atomically move a package to another stage and return its new folder."""
        target = self.package_dir(to_stage, load_id)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.exists(target):
            shutil.rmtree(target)
        os.replace(self.package_dir(from_stage, load_id), target)
        return target

    def complete(self, load_id: str) -> None:
        """A loaded package keeps its package.json as the record of the load, and when it completed
        (`completed_at`); its data files go."""
        package_dir = self.package_dir(NORMALIZED, load_id)
        shutil.rmtree(os.path.join(package_dir, "data"), ignore_errors=True)
        if self.working is not None:
            remove_tree(f"{self.working.url}/{load_id}", self.working)
        with open(os.path.join(package_dir, COMPLETED_FILE), "w") as f:
            f.write(pendulum.now("UTC").isoformat())
        self.move(load_id, NORMALIZED, LOADED)

    def completed_at(self, load_id: str) -> pendulum.DateTime | None:
        """When the package `load_id` completed its load (dlt's `completed_at`); None while it is not loaded. A package
        loaded before lakeload recorded it gives its folder's modification time."""
        package_dir = self.package_dir(LOADED, load_id)
        path = os.path.join(package_dir, COMPLETED_FILE)
        if os.path.isfile(path):
            with open(path) as f:
                parsed = pendulum.parse(f.read().strip())
            if isinstance(parsed, pendulum.DateTime):
                return parsed
        return pendulum.from_timestamp(os.path.getmtime(package_dir)) if os.path.isdir(package_dir) else None

    def discard(self, stage: str, load_id: str) -> None:
        shutil.rmtree(self.package_dir(stage, load_id), ignore_errors=True)
        self._drop_data(stage, load_id)

    def recover(self) -> None:
        """Bring packages left by a killed process back to a complete state.

        - an `extracting` package never completed: its data is dropped (the source runs again);
        - a `normalizing` package is redone from its `extracted` copy;
        - an `extracted` package that also exists as `normalized` was normalized completely.
        """
        for load_id in self.list_packages(EXTRACTING):
            self.discard(EXTRACTING, load_id)
        for load_id in self.list_packages(NORMALIZING):
            self.discard(NORMALIZING, load_id)
        normalized = set(self.list_packages(NORMALIZED)) | set(self.list_packages(LOADED))
        for load_id in self.list_packages(EXTRACTED):
            if load_id in normalized:
                self.discard(EXTRACTED, load_id)
