"""dlt's pipeline modes: `dev_mode` (a fresh working folder and a dataset of its own per pipeline instance) and
credentials given to `run()`/`load()` for the destination.

>>> dev_dataset_name("users", "_20261124031512")
'users_20261124031512'
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pendulum

from lakeload.destinations.reference import credentials_refused
from lakeload.errors import WorkingFolderCorruptedError
from lakeload.storage.packages import PipelineStorage

logger = logging.getLogger("lakeload.pipeline")


def default_pipeline_name() -> str:
    """dlt's pipeline name when none is given: the running script's file name without its extension."""
    import __main__

    main_file = getattr(__main__, "__file__", None) or "lakeload_pipeline"
    return os.path.splitext(os.path.basename(main_file))[0]


def dev_instance_suffix() -> str:
    """The suffix dev_mode gives dataset names: the local time the pipeline was created, in dlt's format
    (`_YYYYMMDDhhmmss`, with dlt's 12-hour `hh`)."""
    return pendulum.now().format("_YYYYMMDDhhmmss")


def dev_dataset_name(dataset_name: str, suffix: str) -> str:
    """`dataset_name` with the dev_mode suffix (no double underscore when the name ends with one).

    >>> dev_dataset_name("data_", "_20261124031512")
    'data_20261124031512'
    """
    return dataset_name + (suffix[1:] if dataset_name.endswith("_") else suffix)


def prepare_working_folder(storage: PipelineStorage, pipeline_name: str, dev_mode: bool) -> None:
    """dev_mode starts from an empty working folder; leaving dev_mode resets the state dev_mode left, as dlt."""
    if dev_mode:
        storage.wipe()
        return
    try:
        state = storage.load_state()
    except WorkingFolderCorruptedError:  # the pipeline raises it when a step needs the state (drop() still works)
        return
    if state is not None and state.get("_local", {}).get("_dev_mode"):
        logger.warning(
            "Pipeline %s was previously created with dev_mode=True and is now being re-created with dev_mode=False. "
            "Local pipeline state and schemas are reset; the state is restored from the destination on the next run.",
            pipeline_name,
        )
        storage.wipe()


def with_credentials(destination: Any, credentials: Any) -> Any:
    """A copy of the filesystem `destination` that uses `credentials` (a dict, a connection string or a
    lakeload credentials object) instead of the configured ones; any other destination is refused."""
    if credentials is None:
        return destination
    if destination is None:
        raise credentials_refused(None)
    return destination.with_credentials(credentials)
