"""The plain table format: a table without a `table_format` hint is its package's files, copied into the bucket.

- every file is copied by Spark executors under the name normalize fixed (a rerun overwrites it); into a local
  bucket beside the package, the driver hard-links them instead (no Spark job);
- `replace`: the table's older files (root and nested) are deleted, only once the new ones are all in place;
- `merge`: appended to, as dlt's filesystem destination does (the pipeline warns: `runtime.run_args`).

Example (a load in progress: `work` is a `FormatLoad` of the package's plain tables)::

    result = PlainFormat().load(work)    # FormatResult(files=[...], replaced_tables=[...], deleted_files=3)
"""

from __future__ import annotations

from typing import TypeVar

from lakeload.destinations.impl.filesystem.client import fsspec_kwargs
from lakeload.destinations.impl.filesystem.table_format import (
    PLAIN,
    FormatLoad,
    FormatResult,
    TableFormat,
    TableFormatCapabilities,
    TableRefresh,
    register_table_format,
)
from lakeload.errors import LoadError
from lakeload.kernel.contracts import TLoadedFile
from lakeload.kernel.filesystem.protocols import SFTP_PROTOCOLS
from lakeload.kernel.load.copy import CopyPayload, copy_files, link_files
from lakeload.load.refresh import table_files
from lakeload.spark.session import run_tasks
from lakeload.spark.session_kind import executors_on_this_host
from lakeload.storage.manifest import PackageFile

FILES_PER_TASK = 8
T = TypeVar("T")


def _chunks(items: list[T], size: int) -> list[list[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class PlainFormat(TableFormat):
    """Files as they are: copied (or linked), and a replaced table's older files deleted."""

    name = PLAIN
    capabilities = TableFormatCapabilities(write_dispositions=("append", "replace"))

    def load(self, work: FormatLoad) -> FormatResult:
        result = FormatResult(files=self.copy(work))
        self.replace(work, result)
        return result

    def drop_table(self, refresh: TableRefresh, table_name: str) -> None:
        """Every file of the table the layout places (tables may share folders in a layout)."""
        refresh.client.delete(table_files(refresh.client, refresh.layout, refresh.schema_name, table_name))

    def truncate_table(self, refresh: TableRefresh, table_name: str, overwritten: bool) -> None:
        """As `drop_table`: plain files keep no history (a rerun deletes only files this load has not written:
        the package's files go in after the refresh)."""
        self.drop_table(refresh, table_name)

    def copy(self, work: FormatLoad) -> list[TLoadedFile]:
        """Copy (or link) the work's files into the bucket; the load-result entries of the files written."""
        config = work.client.config
        payload = CopyPayload(
            bucket_url=config.bucket_url,
            fs_kwargs=fsspec_kwargs(config),
            dataset_path=work.client.dataset_path,
            package_dir=work.package_dir,
            layout=work.layout,
            schema_name=work.schema.name,
            load_id=work.load_id,
            package_timestamp=work.package["created_at"],
            is_local=config.is_local,
            rename_after_write=config.protocol in SFTP_PROTOCOLS,
            working=work.working,
            retry=config.retry,
        )
        if config.protocol == "memory":
            # an in-memory bucket exists only in this process: executors (other processes) cannot reach it
            return copy_files(payload, work.files)
        description = f"lakeload load {work.load_id}: copy files"
        linked: list[TLoadedFile] = []
        left: list[PackageFile] = work.files
        if config.is_local and work.working is None and executors_on_this_host(work.spark):
            try:  # no Spark job for a local bucket beside the package
                linked, left = link_files(payload, left)
            except Exception as exc:  # a layout placeholder or a rename failed: the copy tasks' error
                raise LoadError(f"{description}: {type(exc).__name__}: {exc}") from exc
        chunks = _chunks(left, FILES_PER_TASK)
        copied = run_tasks(work.spark, copy_files, payload, chunks, description, working=work.working, error=LoadError)
        return linked + [f for chunk in copied for f in chunk]

    @staticmethod
    def replace(work: FormatLoad, result: FormatResult) -> None:
        """Delete the older files (those `result` did not write) of every `replace` table of the work's trees.

        As in dlt, a table's disposition is its own, else its nearest ancestor's (`make_nested_hints` may give a
        nested table one); under a root that appends, a nested `replace` table is replaced only when it got rows.
        """
        new_files = {f["path"] for f in result.files}
        loaded = {f["table"] for f in work.files}
        for root_name in work.root_tables:
            jobless_too = work.disposition(root_name) in ("replace", "merge")
            for table in work.schema.nested_tables_of(root_name):
                if work.table_disposition(table["name"]) != "replace" or not (jobless_too or table["name"] in loaded):
                    continue
                files = table_files(work.client, work.layout, work.schema.name, table["name"])
                stale = [p for p in files if p not in new_files and not p.endswith(".lakeload-tmp")]
                work.client.delete(stale)
                result.deleted_files += len(stale)
                result.replaced_tables.append(table["name"])


register_table_format(PlainFormat())
