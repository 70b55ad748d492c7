"""Normalize (driver side): the `Split`s of a package, from its manifest's split entries.

Package files are paths relative to the package. Entries with a `source` are (byte ranges of) files
a source registered at extract and executors read in place; they get the bucket's fsspec options
from `options_for(bucket_url)` here, on the driver, so the options travel only inside the Spark task.

>>> [s.path for s in plan_splits("/pkg", [{"path": "data/000000.users.jsonl", "root_table": "users", "file_format": "jsonl"}])]
['/pkg/data/000000.users.jsonl']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import lakeload.kernel.spark.working as wio
from lakeload.config.bucket_credentials import secret_values
from lakeload.kernel.normalize.plan import Split
from lakeload.kernel.normalize.split_io import SourceFile
from lakeload.storage.manifest import SplitEntry

OptionsFor = Callable[[str], Mapping[str, Any]]


def source_file(entry: SplitEntry, options_for: OptionsFor | None) -> SourceFile:
    """The `SourceFile` of a manifest split entry's `source`, with the bucket's options."""
    source = entry["source"]
    options = dict(options_for(source["bucket_url"])) if options_for is not None else {}
    return SourceFile(
        url=entry["path"], path=source["path"], size=int(source["size"]), version=source["version"],
        start=int(source.get("start") or 0), end=source.get("end"), compression=source.get("compression"),
        add_file_name=bool(source.get("add_file_name")), bucket_url=source["bucket_url"], options=options,
        secrets=tuple(secret_values(options)),
    )


def plan_splits(package: str, entries: list[SplitEntry], options_for: OptionsFor | None = None) -> list[Split]:
    """One `Split` per manifest entry, in order (the split index is the entry's position)."""
    splits = []
    for index, entry in enumerate(entries):
        if "source" in entry:
            path, source = entry["path"], source_file(entry, options_for)
        else:
            path, source = wio.join(package, entry["path"]), None
        splits.append(
            Split(index, path, entry["root_table"], entry["file_format"], entry.get("may_have_tags", False), source=source)
        )
    return splits
