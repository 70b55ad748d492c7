"""`lakeload.attach()`: open a pipeline that ran before, from its working folder (dlt's `dlt.attach`).

>>> import os, tempfile
>>> import lakeload
>>> tmp = tempfile.TemporaryDirectory()
>>> pipeline = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem(os.path.join(tmp.name, "bucket")),
...                              dataset_name="mydata", pipelines_dir=tmp.name)
>>> load_id = pipeline.extract([{"id": 1}, {"id": 2}], table_name="users").loads_ids[0]
>>> p = lakeload.attach("quick_start", pipelines_dir=tmp.name)    # e.g. in a later script
>>> p.dataset_name, p.list_extracted_load_packages() == [load_id], p.list_completed_load_packages()
('mydata', True, [])
"""

from __future__ import annotations

import os
from typing import Any

from lakeload.errors import CannotRestorePipelineError
from lakeload.runtime.package_destination import newest_record
from lakeload.runtime.pipeline import Pipeline
from lakeload.storage.packages import EXTRACTED, LOADED, NORMALIZED, PipelineStorage
from lakeload.storage.working import DEFAULT_PIPELINES_DIR, pipeline_storage


def attach(
    pipeline_name: str,
    pipelines_dir: str | None = None,
    destination: Any = None,
    dataset_name: str | None = None,
    **kwargs: Any,
) -> Pipeline:
    """The pipeline `pipeline_name` as its working folder left it: state, schemas, pending packages.

    The dataset name comes from its state, the destination from the newest package that names a filesystem
    bucket (pass `destination=` for a sink, or to load elsewhere). Without local state, a given `destination`
    restores state and schemas from the bucket; otherwise `CannotRestorePipelineError` names the folder.
    Other keyword arguments (`progress=`, `spark=`) go to the pipeline as in `lakeload.pipeline()`.

    >>> import tempfile
    >>> import lakeload
    >>> tmp = tempfile.TemporaryDirectory()
    >>> lakeload.attach("quick_start", pipelines_dir=tmp.name)
    Traceback (most recent call last):
    lakeload.errors.CannotRestorePipelineError: Pipeline 'quick_start' in pipelines_dir=... could not be attached: the folder .../quick_start does not exist. ...
    >>> pipeline = lakeload.pipeline("quick_start", destination=lakeload.destinations.filesystem("memory://bucket"),
    ...                              dataset_name="mydata", pipelines_dir=tmp.name)
    >>> info = pipeline.extract([{"id": 1}], table_name="users")
    >>> p = lakeload.attach("quick_start", pipelines_dir=tmp.name)
    >>> p.dataset_name, p.destination.bucket_url, p.has_pending_data
    ('mydata', 'memory://bucket', True)
    """
    pipelines_dir = os.path.expanduser(pipelines_dir or DEFAULT_PIPELINES_DIR)
    folder = os.path.join(pipelines_dir, pipeline_name)
    state = PipelineStorage(folder).load_state()
    if state is None and destination is None:
        reason = f"there is no pipeline state in {folder}" if os.path.isdir(folder) else f"the folder {folder} does not exist"
        raise CannotRestorePipelineError(pipeline_name, pipelines_dir, folder, reason)
    pipeline = Pipeline(
        pipeline_name,
        destination if destination is not None else recorded_destination(pipeline_storage(pipelines_dir, pipeline_name)),
        dataset_name or (state or {}).get("dataset_name"),
        pipelines_dir,
        **kwargs,
        attached=True,  # dev_mode as the state has it: never a wiped folder nor a new dataset suffix
    )
    if state is None:
        pipeline.sync_destination()
        if pipeline.storage.load_state() is None:
            reason = f"there is no pipeline state in {folder} nor in dataset '{pipeline.dataset_name}' of {destination!r}"
            raise CannotRestorePipelineError(pipeline_name, pipelines_dir, folder, reason)
    return pipeline


def recorded_destination(storage: PipelineStorage, stages: tuple[str, ...] = (LOADED, NORMALIZED, EXTRACTED)) -> Any:
    """The filesystem (or DuckDB) destination the newest package of `stages` was made for, or None: a sink cannot be rebuilt
    from a record, nor a bucket URL whose password the record masks (`sftp://me:***@host`). Its credentials
    resolve from configuration, as for a destination given a bucket URL only."""
    from lakeload.destinations.impl.filesystem.factory import filesystem

    record = newest_record(storage, stages)
    if record and record.get("destination_type") == "duckdb" and record.get("bucket_url") not in (None, "", ":memory:"):
        from lakeload.destinations.impl.duckdb.factory import duckdb

        return duckdb(record["bucket_url"], destination_name=record.get("destination_name"))  # (the database file)
    if not record or record.get("destination_type") != "filesystem" or not record.get("bucket_url"):
        return None
    if ":***@" in record["bucket_url"]:
        return None
    return filesystem(bucket_url=record["bucket_url"], destination_name=record.get("destination_name"))
