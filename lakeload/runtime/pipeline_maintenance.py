"""The state-keeping part of `Pipeline`: the working folder's lock and state file, restoring from the bucket,
the checks before a run, and dropping the working folder or its pending packages.

`Maintenance` owns the state (`pipeline.state`) and the lock; it is given the pipeline's settings, its working
folder (`storage`), a getter of its Spark session (for the destination's job client) and its early normalize runs.

>>> import os, tempfile
>>> import lakeload
>>> tmp = tempfile.TemporaryDirectory()
>>> pipeline = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem(os.path.join(tmp.name, "bucket")),
...                              dataset_name="mydata", pipelines_dir=tmp.name)
>>> info = pipeline.extract([{"id": 1}], table_name="users")
>>> pipeline.sync_destination()  # state and schemas from the bucket when the working folder has none
>>> pipeline.sync_schema()  # the default schema into the bucket's _dlt_version
>>> sorted(os.listdir(os.path.join(tmp.name, "bucket", "mydata")))
['_dlt_version', 'init']
>>> os.listdir(os.path.join(tmp.name, "bucket", "mydata", "_dlt_version"))
['quick_start__...jsonl']
>>> pipeline.drop_pending_packages()
>>> pipeline.has_pending_data
False
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from lakeload.destinations.reference import JobClient
from lakeload.destinations.state_types import PipelineState
from lakeload.errors import ConfigurationError, WorkingFolderCorruptedError
from lakeload.runtime.early_runs import EarlyRuns
from lakeload.runtime.lock import PipelineLock
from lakeload.runtime.package_destination import check_pending_destinations
from lakeload.runtime.pipeline_settings import PipelineSettings
from lakeload.runtime.state import new_state
from lakeload.storage.packages import EXTRACTED, EXTRACTING, NORMALIZED, NORMALIZING, PipelineStorage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class Maintenance:
    """The state of pipeline `settings.pipeline_name` in its working folder `storage`, and its lock."""

    def __init__(
        self, settings: PipelineSettings, storage: PipelineStorage, spark: Callable[[], SparkSession], early: EarlyRuns,
    ) -> None:
        self._settings = settings
        self._storage = storage
        self._spark = spark
        self._early = early
        self._lock = PipelineLock(storage.root, settings.pipeline_name)
        self._state_mark = storage.state_mark()
        state = self._read_state()
        self.state: PipelineState = state or self._new_state()
        self.state["dataset_name"] = settings.dataset_name
        # a broken state.json is never restored from the bucket either (the steps raise instead)
        self.synced = state is not None or self._broken is not None

    def keep_dev_mode(self, dev_mode: bool | None) -> bool:
        """The pipeline's dev mode, `dev_mode` or the state's when None (`attach()`), kept in the state; a pipeline in
        dev mode never restores from the bucket, as dlt's."""
        if dev_mode is None:
            dev_mode = bool(self.state.get("_local", {}).get("_dev_mode"))
        self.state.setdefault("_local", {})["_dev_mode"] = dev_mode
        self.synced |= dev_mode
        return dev_mode

    def _new_state(self) -> PipelineState:
        return new_state(self._settings.pipeline_name, self._settings.dataset_name, "filesystem", None)

    def job_client(self) -> JobClient:
        """The destination's job client for the pipeline's dataset."""
        return self._settings.job_client(self._spark, self._storage)

    def _read_state(self) -> PipelineState | None:
        """The working folder's state; a broken `state.json` is kept in `_broken` (raised by the steps that need
        the state, see `holding_lock`) so that the pipeline object exists and `drop()` can start it afresh."""
        self._broken: WorkingFolderCorruptedError | None = None
        try:
            return self._storage.load_state()
        except WorkingFolderCorruptedError as exc:
            self._broken = exc
            return None

    def save_state(self) -> None:
        """Write the state to the working folder."""
        self._storage.save_state(self.state)
        self._state_mark = self._storage.state_mark()

    @contextlib.contextmanager
    def holding_lock(self, repair: bool = False) -> Iterator[None]:
        """The working folder's lock (see `lakeload.runtime.lock`); state another process saved meanwhile is read.

        A broken `state.json` raises `WorkingFolderCorruptedError` here, except for what `repair`s the folder.
        """
        with self._lock.hold() as first:
            mark = self._storage.state_mark()
            if first and mark is not None and mark != self._state_mark:
                state = self._read_state()
                self._state_mark, self.state, self.synced = mark, state or {}, True
                self.state["dataset_name"] = self._settings.dataset_name
            if self._broken is not None and not repair:
                raise self._broken
            yield

    def sync_destination(self) -> None:
        """Restore state and schemas from the bucket when the working folder has none."""
        if self.synced:
            return
        state, schemas = self.job_client().restore()
        if state is not None:
            with self.holding_lock():
                if not self.synced:  # else another process saved the state meanwhile, and it was read
                    state["_local"] = {}
                    state["dataset_name"] = self._settings.dataset_name
                    self.state = state
                    for schema in schemas:
                        self._storage.save_schema(schema)
                    self.save_state()
        self.synced = True

    def sync_step(self) -> None:
        """`run()`'s first step: the destination checked, state restored, pending packages' destination checked."""
        self.job_client().prepare()  # a bad layout, or a bucket that cannot be used, fails before any work
        self.sync_destination()
        check_pending_destinations(self._storage, self._settings.destination_record(), self._settings.pipeline_name)

    def sync_schema(self, schema_name: str | None = None) -> None:
        """Store the schema `schema_name` (the default one when None) in the bucket's `_dlt_version` when that
        version is not stored yet (see `Pipeline.sync_schema`)."""
        with self.holding_lock():
            name = schema_name or self.state.get("default_schema_name")
            pipeline_name, schema_names = self._settings.pipeline_name, list(self.state.get("schema_names", []))
            if not name:
                raise ConfigurationError(
                    f"Pipeline {pipeline_name} has no schema to sync yet: extract data with extract() or run() first."
                )
            if name not in schema_names:
                raise ConfigurationError(f"Pipeline {pipeline_name} has no schema '{name}'; its schemas are {schema_names}.")
            self.job_client().update_stored_schema(self._storage.stored_or_new_schema(name))

    def drop(self) -> None:
        """Delete the working folder (state, schemas) and the pending packages (also under working_url); the bucket is
        untouched. Works on a folder whose files are broken (see `Pipeline.drop`)."""
        with self.holding_lock(repair=True):
            self._storage.wipe()
            self._state_mark = None
            self.state = self._new_state()
            self.synced = False
            self._broken = None
            self._early.forget()

    def drop_pending_packages(self) -> None:
        """Delete every package not loaded yet; incremental sources go back to what the bucket has loaded.

        With a broken `state.json`, the packages go and so does that file: with nothing pending, the bucket's state is
        the pipeline's whole state, and the next run restores it as in a new folder.
        """
        with self.holding_lock(repair=True):
            for stage in (EXTRACTING, EXTRACTED, NORMALIZING, NORMALIZED):
                for load_id in self._storage.list_packages(stage):
                    self._storage.discard(stage, load_id)
            self._early.forget()
            if self._broken is not None:
                os.remove(self._storage.state_path)
                self.state, self._state_mark = self._new_state(), None
                self.synced, self._broken = False, None
                return
            loaded: PipelineState | None = None
            if self._settings.destination is not None:
                loaded, _ = self.job_client().restore()
            self.state["sources"] = (loaded or {}).get("sources", {})
            self.save_state()
