"""What the dashboard shows, as plain tables: read from the bucket with DuckDB (`pipeline.sql_client()`) and from
the working folder; never from Spark.

Example (a pipeline that loaded data)::

    view = PipelineView.open("github_demo", None)
    view.load_history()[:1]   # [{'load_id': '1795...', 'schema_name': 'github_demo', 'status': 0, 'inserted_at': ...}]
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from lakeload.runtime.pipeline_views import WorkingFolder, open_folder
from lakeload.runtime.trace import TraceRecord, read_trace


class LoadRow(TypedDict):
    """A row of `_dlt_loads`."""

    load_id: str
    schema_name: str
    status: int  # 0: complete
    inserted_at: datetime.datetime


class LoadRowCount(TypedDict):
    """The rows one load put into one root table."""

    load_id: str
    table: str
    rows: int


class ColumnRow(TypedDict):
    """One column of a data table, as the schema tab lists it."""

    table: str
    parent: str
    column: str
    data_type: str
    nullable: bool
    hints: str  # its hints, comma-separated
    variant: bool


class PendingRow(TypedDict):
    """A package not loaded yet, and the error of the last run when it failed."""

    load_id: str
    stage: str
    last_error: str


@dataclass
class PipelineView:
    """A pipeline as the dashboard reads it: its working folder, and its dataset through DuckDB."""

    folder: WorkingFolder
    pipeline: Any  # lakeload.Pipeline, attached to the folder (no Spark is started)

    @classmethod
    def open(cls, name: str, pipelines_dir: str | None) -> PipelineView:
        folder = open_folder(name, pipelines_dir)
        return cls(folder, folder.attach(folder.destination()))

    def bucket_url(self) -> str:
        """The bucket (or database) the dashboard reads (the one the pipeline last loaded to), its password masked."""
        from lakeload.config.credentials import url_without_password

        destination = self.pipeline.destination
        url = getattr(destination, "bucket_url", None) or destination.location(self.folder.name)
        return url_without_password(str(url))

    def query(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of `sql` over the dataset (its tables are DuckDB views)."""
        with self.pipeline.sql_client() as client, client.execute_query(sql) as cursor:
            columns = [d[0] for d in cursor.description or ()]
            return columns, [tuple(r) for r in cursor.fetchall()]

    def load_history(self) -> list[LoadRow]:
        """`_dlt_loads`, newest first: load id, schema, status (0 = complete) and when."""
        columns, rows = self.query(
            "SELECT load_id, schema_name, status, inserted_at FROM _dlt_loads ORDER BY load_id DESC"
        )
        return [cast(LoadRow, dict(zip(columns, row, strict=True))) for row in rows]

    def rows_per_load(self) -> list[LoadRowCount]:
        """Rows each load put into each root table (`_dlt_load_id` counts), oldest load first."""
        found: list[LoadRowCount] = []
        for table in self.data_tables(roots_only=True):
            _, rows = self.query(f'SELECT _dlt_load_id, count(*) FROM "{table}" GROUP BY 1')
            found += [{"load_id": load_id, "table": table, "rows": count} for load_id, count in rows]
        return sorted(found, key=lambda r: (r["load_id"], r["table"]))

    def data_tables(self, roots_only: bool = False) -> list[str]:
        tables = self.pipeline.default_schema.data_tables()
        return [t["name"] for t in tables if not (roots_only and t.get("parent"))]

    def schema_columns(self) -> list[ColumnRow]:
        """Every column of every data table: type, nullability, hints, and whether it is a variant column."""
        found: list[ColumnRow] = []
        for table in self.pipeline.default_schema.data_tables():
            for name, column in table.get("columns", {}).items():
                hints = [h for h in ("primary_key", "merge_key", "unique", "row_key", "parent_key", "root_key",
                                     "partition", "incremental", "hard_delete", "dedup_sort") if column.get(h)]
                found.append({
                    "table": table["name"], "parent": table.get("parent") or "", "column": name,
                    "data_type": column.get("data_type", ""), "nullable": column.get("nullable", True),
                    "hints": ", ".join(hints), "variant": bool(column.get("variant")),
                })
        return found

    def trace(self) -> TraceRecord | None:
        return read_trace(self.folder.storage.root)

    def pending_packages(self) -> list[PendingRow]:
        """Packages not loaded yet (extracted or normalized), with the error of the last run when it failed."""
        trace = self.trace()
        error = next((s["error"] for s in (trace["steps"] if trace else []) if s.get("error")), "") or ""
        return [{"load_id": load_id, "stage": stage, "last_error": error} for load_id, stage in self.folder.pending()]
