"""Load (driver side) of a package's refresh (`lakeload.runtime.refresh`): the bucket is emptied of the tables the
refresh drops or truncates, before any new file of the package goes in.

As dlt's filesystem destination does:
- a dropped table loses all its files (a Delta table its whole folder, log included), and every stored version
  of the package's schema in `_dlt_version` goes (the load then stores the new one, without the table);
- a truncated table loses its files; a Delta table is emptied by one commit that removes every file (history
  kept, readable by delta-rs), unless this package overwrites it anyway (`replace`).

A rerun after a crash does it again only if it did not finish: a marker in the package folder records it, and
the Delta commit carries the load's application transaction.

Example (`client`, `schema` and `package` of a load in progress)::

    RefreshLoad(client, layout, "quick_start").apply(schema, package, package_dir)
"""

from __future__ import annotations

import logging
import os

from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.destinations.impl.filesystem.state_file_names import parse_version_name
from lakeload.destinations.impl.filesystem.table_format import TableRefresh, table_format
from lakeload.kernel.filesystem.layout import Layout
from lakeload.schema.replace import replaces_partitions
from lakeload.schema.schema import Schema
from lakeload.storage.manifest import NormalizedPackage

logger = logging.getLogger("lakeload.load")
DONE_MARKER = "refresh.done"


def table_files(client: FilesystemClient, layout: Layout, schema_name: str, table_name: str) -> list[str]:
    """The files of one table in the bucket (paths relative to the dataset), in any layout.

    >>> import tempfile
    >>> from lakeload.destinations.impl.filesystem.configuration import resolve_configuration
    >>> tmp = tempfile.TemporaryDirectory()
    >>> client = FilesystemClient(resolve_configuration({"bucket_url": tmp.name}, "filesystem", None), "mydata")
    >>> client.write_bytes("users/1795296531.14.0.jsonl.gz", b"")
    >>> client.write_bytes("users__pets/1795296531.14.1.jsonl.gz", b"")
    >>> table_files(client, Layout.parse("{table_name}/{load_id}.{file_id}.{ext}"), "s", "users")
    ['users/1795296531.14.0.jsonl.gz']
    """
    prefix = layout.table_prefix(schema_name, table_name)
    folder = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
    return [p for p in client.find(folder) if p.startswith(prefix)]


def _overwritten(schema: Schema, package: NormalizedPackage, table_name: str) -> bool:
    """A Delta table this package replaces anyway (its root has `replace`, not of the loaded partitions only): the
    load's overwrite truncates it."""
    if table_name not in schema.tables:
        return False
    root = schema.root_table_of(table_name)
    return root["name"] in package["root_tables"] and root.get("write_disposition") == "replace" and not replaces_partitions(root)


class RefreshLoad:
    """Applies the refresh of packages loading into one dataset."""

    def __init__(self, client: FilesystemClient, layout: Layout, pipeline_name: str) -> None:
        self.client = client
        self.layout = layout
        self.pipeline_name = pipeline_name

    def apply(self, schema: Schema, package: NormalizedPackage, package_dir: str) -> None:
        """Drop and truncate what the package's refresh names (once per package)."""
        plan = package.get("refresh")
        marker = os.path.join(package_dir, DONE_MARKER)
        if not plan or os.path.exists(marker):
            return
        formats = plan.get("table_formats") or dict.fromkeys(plan.get("delta_tables", []), "delta")  # older packages
        target = TableRefresh(self.client, self.layout, schema.name, self.pipeline_name, package["load_id"])
        dropped = [t["name"] for t in plan.get("dropped_tables", [])]
        if dropped:
            logger.info("refresh=%s: dropping tables %s", plan["refresh"], dropped)
            for name in dropped:
                table_format(formats.get(name)).drop_table(target, name)
            self._drop_stored_schemas(schema.name)
        for table in plan.get("truncated_tables", []):
            name = table["name"]
            table_format(formats.get(name)).truncate_table(target, name, _overwritten(schema, package, name))
        with open(marker, "w") as f:
            f.write(plan["refresh"])

    def _drop_stored_schemas(self, schema_name: str) -> None:
        """dlt drops a schema's history with its tables: the load stores the new version next."""
        names = self.client.list_dir("_dlt_version")
        mine = [n for n in names if (parts := parse_version_name(n)) and parts.schema_name == schema_name]
        self.client.delete([f"_dlt_version/{n}" for n in mine])
