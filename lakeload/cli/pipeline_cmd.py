"""`lakeload pipeline <name> ...`: work on a pipeline's working folder from the command line.

    lakeload pipeline quick_start drop-pending-packages
    lakeload pipeline quick_start drop-pending-packages --pipelines-dir /data/pipelines --destination prod_lake

Exit codes: 0 done, 1 a lakeload error (printed on stderr, secrets masked), 2 wrong arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lakeload.errors import LakeloadError

PIPELINE_ACTIONS = ("drop-pending-packages",)


def register(commands: Any) -> None:
    """Add the `pipeline` command to the top-level subparsers."""
    command = commands.add_parser(
        "pipeline",
        help="work on a pipeline's working folder: lakeload pipeline <name> drop-pending-packages",
        description="Work on the working folder (state, schemas, load packages) of the pipeline <name>.",
    )
    command.add_argument("pipeline_name", metavar="NAME", help="the pipeline's name")
    command.add_argument("action", choices=PIPELINE_ACTIONS, metavar="ACTION",
                         help="drop-pending-packages: delete every package not loaded yet; incremental sources go back "
                         "to what the bucket has loaded")
    command.add_argument("--pipelines-dir", default=None, metavar="PATH",
                         help="folder holding the pipelines' working folders (default: ~/.lakeload/pipelines)")
    command.add_argument("--destination", default=None, metavar="NAME",
                         help="the destination (a configured name, or 'filesystem') to read the loaded state from "
                         "(default: the one the pending packages were made for)")
    command.set_defaults(handler=run_pipeline_command)


def run_pipeline_command(args: argparse.Namespace) -> int:
    """Run one pipeline action; returns the exit code."""
    try:
        return drop_pending_packages(args.pipeline_name, args.pipelines_dir, args.destination)
    except LakeloadError as exc:
        print(f"lakeload: error: {exc}", file=sys.stderr)
        return 1


def drop_pending_packages(pipeline_name: str, pipelines_dir: str | None, destination: str | None) -> int:
    """`pipeline.drop_pending_packages()` for a pipeline found on disk; prints what was dropped."""
    from lakeload.runtime.package_destination import pending_records
    from lakeload.runtime.pipeline import DEFAULT_PIPELINES_DIR, Pipeline
    from lakeload.runtime.working import pipeline_storage

    folder = os.path.expanduser(pipelines_dir or DEFAULT_PIPELINES_DIR)
    if not os.path.isdir(os.path.join(folder, pipeline_name)):
        raise LakeloadError(f"No pipeline '{pipeline_name}' in {folder}. Fix: check the name, or pass --pipelines-dir.")
    storage = pipeline_storage(folder, pipeline_name)
    pending = pending_records(storage)
    recorded = [package["destination"] for _, package in pending if package.get("destination")]
    if destination is None and recorded and recorded[0]["destination_type"] != "sink":
        destination = recorded[0]["destination_name"]
    dataset = (storage.load_state() or {}).get("dataset_name")
    pipeline = Pipeline(pipeline_name, destination, dataset, folder, attached=True)  # the folder as it is (dev_mode too)
    pipeline.drop_pending_packages()
    ids = ", ".join(load_id for load_id, _ in pending) or "none"
    print(f"Dropped {len(pending)} pending load package(s) of pipeline '{pipeline_name}': {ids}.")
    return 0
