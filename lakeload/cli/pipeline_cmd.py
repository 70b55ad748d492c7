"""`lakeload pipeline <name> ...`: inspect and repair a pipeline's working folder from the command line.

    lakeload pipeline --list
    lakeload pipeline quick_start info | trace | failed-jobs | load-package [LOAD_ID] | schema [--format json]
    lakeload pipeline quick_start sync
    lakeload pipeline quick_start drop users --yes
    lakeload pipeline quick_start show --port 8501
    lakeload pipeline quick_start drop-pending-packages --pipelines-dir /data/pipelines --destination prod_lake

Exit codes: 0 done, 1 a lakeload error (printed on stderr, secrets masked), 2 wrong arguments.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lakeload.config.log_secrets import mask_secrets
from lakeload.errors import LakeloadError


def register(commands: Any) -> None:
    """Add the `pipeline` command and its actions to the top-level subparsers."""
    command = commands.add_parser(
        "pipeline",
        help="inspect and repair a pipeline's working folder: lakeload pipeline <name> info | trace | ...",
        description="Inspect and repair the working folder (state, schemas, load packages, last trace) of a pipeline.",
    )
    command.add_argument("pipeline_name", metavar="NAME", nargs="?", help="the pipeline's name")
    command.add_argument("--list", action="store_true", help="list the pipelines in the pipelines folder")
    command.add_argument("--pipelines-dir", default=None, metavar="PATH",
                         help="folder holding the pipelines' working folders (default: ~/.lakeload/pipelines)")
    after = argparse.ArgumentParser(add_help=False)  # --pipelines-dir after the action too
    after.add_argument("--pipelines-dir", default=argparse.SUPPRESS, metavar="PATH", help=argparse.SUPPRESS)
    actions = command.add_subparsers(dest="action", metavar="ACTION", parser_class=_parser_with(after))
    actions.add_parser("info", help="state, schemas and load packages")
    actions.add_parser("trace", help="the last run's steps, times, rows per table and errors")
    package = actions.add_parser("load-package", help="one load package (the newest by default)")
    package.add_argument("load_id", nargs="?", default=None, metavar="LOAD_ID")
    actions.add_parser("failed-jobs", help="what the last run failed at, and the packages it left pending")
    schema = actions.add_parser("schema", help="a stored schema (the default one) as YAML or JSON")
    schema.add_argument("--format", choices=("yaml", "json"), default="yaml", dest="schema_format")
    schema.add_argument("--schema", default=None, dest="schema_name", metavar="NAME", help="another schema of the pipeline")
    sync = actions.add_parser("sync", help="restore state and schemas from the bucket (the working folder is replaced)")
    sync.add_argument("--destination", default=None, metavar="NAME", help="the destination to restore from")
    sync.add_argument("--dataset", default=None, metavar="NAME", help="the dataset to restore from")
    show = actions.add_parser("show", help="a local web dashboard: loads, rows per table, schema, last run, SQL")
    show.add_argument("--port", type=int, default=8501, help="port to serve on (default: %(default)s)")
    show.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    dropper = actions.add_parser("drop", help="drop resources' tables (data and schema) and state, as dlt's drop")
    dropper.add_argument("resources", nargs="*", metavar="RESOURCE", help="resources whose tables and state go")
    dropper.add_argument("--drop-all", action="store_true", help="every table of the default schema, and all source state")
    dropper.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    dropper.add_argument("--destination", default=None, metavar="NAME", help="the destination to drop from")
    drop = actions.add_parser("drop-pending-packages",
                              help="delete every package not loaded yet; incremental sources go back to what the bucket has loaded")
    drop.add_argument("--destination", default=None, metavar="NAME",
                      help="the destination (a configured name, or 'filesystem') to read the loaded state from "
                      "(default: the one the pending packages were made for)")
    command.set_defaults(handler=run_pipeline_command)


def _parser_with(parent: argparse.ArgumentParser) -> type[argparse.ArgumentParser]:
    class ActionParser(argparse.ArgumentParser):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(parents=[parent], **kwargs)

    return ActionParser


def run_pipeline_command(args: argparse.Namespace) -> int:
    """Run one pipeline action; returns the exit code (0 done, 1 a lakeload error, 2 wrong arguments)."""
    from lakeload.runtime import pipeline_views as views

    if args.list:
        print(views.show_list(args.pipelines_dir))
        return 0
    if args.pipeline_name is None or args.action is None:
        print("lakeload pipeline: error: give a pipeline NAME and an ACTION, or --list (see --help)", file=sys.stderr)
        return 2
    try:
        if args.action == "drop-pending-packages":
            return drop_pending_packages(args.pipeline_name, args.pipelines_dir, args.destination)
        if args.action == "drop":
            from lakeload.cli.pipeline_drop import drop as drop_resources

            return drop_resources(args.pipeline_name, args.pipelines_dir, args.resources, args.drop_all, args.yes,
                                  args.destination)
        if args.action == "show":
            from lakeload.dashboard.launch import serve

            views.open_folder(args.pipeline_name, args.pipelines_dir)  # a clear error before the server starts
            return serve(args.pipeline_name, args.pipelines_dir, args.port, args.host)
        if args.action == "sync":
            return sync(args.pipeline_name, args.pipelines_dir, args.destination, args.dataset)
        folder = views.open_folder(args.pipeline_name, args.pipelines_dir)
        shown = {
            "info": lambda: views.show_info(folder),
            "trace": lambda: views.show_trace(folder),
            "load-package": lambda: views.show_load_package(folder, args.load_id),
            "failed-jobs": lambda: views.show_failed_jobs(folder),
            "schema": lambda: views.show_schema(folder, args.schema_name, args.schema_format),
        }[args.action]()
        print(shown)
        return 0
    except LakeloadError as exc:
        print(f"lakeload: error: {mask_secrets(str(exc))}", file=sys.stderr)
        return 1


def sync(pipeline_name: str, pipelines_dir: str | None, destination: str | None, dataset: str | None) -> int:
    """dlt's `pipeline sync`: replace the working folder's state and schemas by the newest ones in the bucket."""
    from lakeload.runtime.pipeline_views import open_folder

    folder = open_folder(pipeline_name, pipelines_dir)
    pending = [load_id for load_id, _ in folder.pending()]
    if pending:
        raise LakeloadError(
            f"Pipeline '{pipeline_name}' has pending load packages ({', '.join(pending)}); sync would lose them. Fix: "
            f"load them (pipeline.load() or the next run), or drop them with `lakeload pipeline {pipeline_name} "
            "drop-pending-packages`, then sync."
        )
    pipeline = folder.attach(destination or folder.destination(), dataset)
    pipeline.destination_client().check_bucket()  # a bucket that cannot be reached or is not configured: nothing wiped
    pipeline.drop()
    pipeline.sync_destination()
    restored = pipeline.state
    if not restored.get("schema_names"):
        print(f"The bucket has no state of pipeline '{pipeline_name}' in dataset '{pipeline.dataset_name}': "
              "the working folder is now empty.")
        return 0
    print(f"Restored pipeline '{pipeline_name}' from the bucket: state version {restored.get('_state_version')}, "
          f"schemas {', '.join(restored['schema_names'])}.")
    return 0


def drop_pending_packages(pipeline_name: str, pipelines_dir: str | None, destination: str | None) -> int:
    """`pipeline.drop_pending_packages()` for a pipeline found on disk; prints what was dropped."""
    from lakeload.runtime.package_destination import pending_records
    from lakeload.runtime.pipeline_views import open_folder

    folder = open_folder(pipeline_name, pipelines_dir)
    pending = pending_records(folder.storage)
    recorded = [package["destination"] for _, package in pending if package.get("destination")]
    if destination is None and recorded and recorded[0]["destination_type"] != "sink":
        destination = recorded[0]["destination_name"]
    folder.attach(destination).drop_pending_packages()  # the folder as it is (dev_mode too)
    ids = ", ".join(load_id for load_id, _ in pending) or "none"
    print(f"Dropped {len(pending)} pending load package(s) of pipeline '{pipeline_name}': {ids}.")
    return 0
