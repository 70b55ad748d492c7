"""The state-keeping side of `Pipeline`: the working folder's lock and state file, restoring from the bucket,
the checks before a run, and dropping the working folder or its pending packages.

>>> import os, tempfile
>>> import lakeload
>>> tmp = tempfile.TemporaryDirectory()
>>> pipeline = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem(os.path.join(tmp.name, "bucket")),
...                              dataset_name="mydata", pipelines_dir=tmp.name)
>>> load_id = pipeline.extract([{"id": 1}], table_name="users")
>>> pipeline.sync_destination()  # state and schemas from the bucket when the working folder has none
>>> pipeline.sync_schema()  # the default schema into the bucket's _dlt_version
>>> sorted(os.listdir(os.path.join(tmp.name, "bucket", "mydata")))
['_dlt_version', 'init']
>>> pipeline.drop_pending_packages()
>>> pipeline.has_pending_data
False
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any, TypeVar

from lakeload.errors import ConfigurationError, WorkingFolderCorruptedError
from lakeload.normalize.early import EarlyNormalize
from lakeload.runtime.lock import PipelineLock, holds_lock
from lakeload.runtime.package_destination import check_pending_destinations
from lakeload.runtime.pipeline_inspect import PipelineInspect
from lakeload.runtime.state import new_state
from lakeload.runtime.trace import RunTrace
from lakeload.storage.packages import EXTRACTED, EXTRACTING, NORMALIZED, NORMALIZING

_P = TypeVar("_P", bound="PipelineMaintenance")


class PipelineMaintenance(PipelineInspect):
    """State plumbing of `Pipeline` (see the module docstring)."""

    _lock: PipelineLock
    _state_mark: tuple[int, int, int] | None
    _synced: bool
    _early: dict[str, EarlyNormalize]
    last_trace: RunTrace | None

    def _read_state(self) -> dict[str, Any] | None:
        """The working folder's state; a broken `state.json` is kept in `_broken` (raised by the steps that need
        the state, see `_holding_lock`) so that the pipeline object exists and `drop()` can start it afresh."""
        self._broken: WorkingFolderCorruptedError | None = None
        try:
            return self.storage.load_state()
        except WorkingFolderCorruptedError as exc:
            self._broken = exc
            return None

    def _save_state(self) -> None:
        self.storage.save_state(self.state)
        self._state_mark = self.storage.state_mark()

    @contextlib.contextmanager
    def _holding_lock(self, repair: bool = False) -> Iterator[None]:
        """The working folder's lock (see `lakeload.runtime.lock`); state another process saved meanwhile is read.

        A broken `state.json` raises `WorkingFolderCorruptedError` here, except for what `repair`s the folder.
        """
        with self._lock.hold() as first:
            mark = self.storage.state_mark()
            if first and mark is not None and mark != self._state_mark:
                state = self._read_state()
                self._state_mark, self.state, self._synced = mark, state or {}, True
                self.state["dataset_name"] = self.dataset_name
            if self._broken is not None and not repair:
                raise self._broken
            yield

    def sync_destination(self) -> None:
        """Restore state and schemas from the bucket when the working folder has none."""
        if self._synced:
            return
        state, schemas = self._job_client().restore()
        if state is not None:
            with self._holding_lock():
                if not self._synced:  # else another process saved the state meanwhile, and it was read
                    state["_local"] = {}
                    state["dataset_name"] = self.dataset_name
                    self.state = state
                    for schema in schemas:
                        self.storage.save_schema(schema)
                    self._save_state()
        self._synced = True

    def _sync_step(self) -> None:
        """`run()`'s first step: the destination checked, state restored, pending packages' destination checked."""
        self._job_client().prepare()  # a bad layout, or a bucket that cannot be used, fails before any work
        self.sync_destination()
        check_pending_destinations(self.storage, self._destination_record(), self.pipeline_name)

    @holds_lock
    def sync_schema(self, schema_name: str | None = None) -> None:
        """Store the schema `schema_name` (the default one when None) in the bucket's `_dlt_version` when that
        version is not stored yet, initializing the dataset first: dlt's `sync_schema()` on a filesystem bucket.

        >>> import os, tempfile
        >>> import lakeload
        >>> tmp = tempfile.TemporaryDirectory()
        >>> pipeline = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem(os.path.join(tmp.name, "bucket")),
        ...                              dataset_name="mydata", pipelines_dir=tmp.name)
        >>> load_id = pipeline.extract([{"id": 1}], table_name="users")   # and pipeline.normalize(), usually
        >>> pipeline.sync_schema()
        >>> os.listdir(os.path.join(tmp.name, "bucket", "mydata", "_dlt_version"))
        ['quick_start__...jsonl']
        """
        name = schema_name or self.state.get("default_schema_name")
        if not name:
            raise ConfigurationError(
                f"Pipeline {self.pipeline_name} has no schema to sync yet: extract data with extract() or run() first."
            )
        if name not in self.schema_names:
            raise ConfigurationError(
                f"Pipeline {self.pipeline_name} has no schema '{name}'; its schemas are {self.schema_names}."
            )
        self._job_client().update_stored_schema(self.schema(name))

    def drop(self: _P) -> _P:
        """Delete the working folder (state, schemas) and the pending packages (also under working_url); the bucket is
        untouched. Works on a folder whose files are broken: the way to start such a pipeline afresh.

        Returns this pipeline, now as fresh as a new one (dlt's `p = p.drop()`): its next run restores state and
        schemas from the bucket, as a first run does.
        """
        with self._holding_lock(repair=True):
            self.storage.wipe()
            self._state_mark = None
            self.state = new_state(self.pipeline_name, self.dataset_name, "filesystem", None)
            self._synced = False
            self._broken = None
            self._forget_early()
            self.last_trace = None
        return self

    def drop_pending_packages(self) -> None:
        """Delete every package not loaded yet; incremental sources go back to what the bucket has loaded.

        Files that an incremental files source picked for a dropped package are picked again by the next run.
        With a broken `state.json`, the packages go and so does that file: with nothing pending, the bucket's state is
        the pipeline's whole state, and the next run restores it as in a new folder.
        """
        with self._holding_lock(repair=True):
            self._drop_pending_packages()

    def _forget_early(self) -> None:
        """Wait for the normalize tasks begun during an extract whose package goes (dropped, or normalized afresh),
        then forget them."""
        for load_id, early in self._early.items():
            early.results(load_id)
        self._early.clear()

    def _drop_pending_packages(self) -> None:
        for stage in (EXTRACTING, EXTRACTED, NORMALIZING, NORMALIZED):
            for load_id in self.storage.list_packages(stage):
                self.storage.discard(stage, load_id)
        self._forget_early()
        if self._broken is not None:
            os.remove(self.storage.state_path)
            self.state, self._state_mark = new_state(self.pipeline_name, self.dataset_name, "filesystem", None), None
            self._synced, self._broken = False, None
            return
        loaded: dict[str, Any] | None = None
        if self.destination is not None:
            loaded, _ = self._job_client().restore()
        self.state["sources"] = (loaded or {}).get("sources", {})
        self._save_state()
