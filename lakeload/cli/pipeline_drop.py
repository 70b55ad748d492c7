"""`lakeload pipeline <name> drop [RESOURCE ...]`: drop resources' tables and state, as `dlt pipeline drop`.

    lakeload pipeline crm drop users deals        # asks before dropping; --yes does not ask
    lakeload pipeline crm drop --drop-all --yes   # every table of the default schema, and the source's state

The drop is a load package of its own with a `refresh` plan (see `lakeload.runtime.refresh`): its load deletes the
tables' files from the bucket (Delta tables: their folders), stores the schema without them and the state
without the resources' entries (incremental cursors included), so the next run loads them afresh.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from lakeload.errors import LakeloadError
from lakeload.runtime.pipeline_views import open_folder
from lakeload.runtime.refresh import tables_of_resources


class DropNotConfirmedError(LakeloadError):
    """`drop` was not confirmed (answered no, or no terminal to ask on and no `--yes`)."""


def drop(
    pipeline_name: str, pipelines_dir: str | None, resources: list[str], drop_all: bool, yes: bool,
    destination: str | None = None, ask: Callable[[str], str] = input,
) -> int:
    """Drop the tables and state of `resources` (or of everything with `drop_all`) of the default schema."""
    from lakeload.extract.resource import Resource
    from lakeload.extract.source import Source

    folder = open_folder(pipeline_name, pipelines_dir)
    state = folder.state
    schema_name = str(state.get("default_schema_name") or "")
    schema = folder.storage.load_schema(schema_name) if schema_name else None
    if schema is None or not (resources or drop_all):
        raise LakeloadError(
            f"Nothing to drop in pipeline '{pipeline_name}': " + ("it has no schema yet." if schema is None else
                                                                  "name the resources to drop, or pass --drop-all.")
        )
    known = sorted({str(t["resource"]) for t in schema.data_tables() if t.get("resource") and not t.get("parent")})
    unknown = [r for r in resources if r not in known]
    if unknown:
        raise LakeloadError(f"Pipeline '{pipeline_name}' has no resources {unknown}; its resources: {', '.join(known)}.")
    tables = [t["name"] for t in tables_of_resources(schema, None if drop_all else resources)]
    print(f"About to drop from pipeline '{pipeline_name}' (schema '{schema_name}', dataset '{state.get('dataset_name')}'): "
          f"tables {', '.join(tables) or 'none'} and the state of "
          + ("every resource of the source." if drop_all else f"resources {', '.join(resources)}."))
    if not yes:
        if not sys.stdin.isatty():
            raise DropNotConfirmedError("Not dropped: no terminal to confirm on. Fix: pass --yes to drop without asking.")
        if ask("Proceed? [y/N] ").strip().lower() not in ("y", "yes"):
            raise DropNotConfirmedError("Not dropped: not confirmed.")
    pipeline = folder.attach(destination or folder.destination())
    emptied = Source(schema_name, {r: Resource(r, []) for r in resources})
    info = pipeline.run(emptied, refresh="drop_sources" if drop_all else "drop_resources")
    print(f"Dropped {len(tables)} table(s) in load package {', '.join(info.load_ids) or 'none'}.")
    return 0
