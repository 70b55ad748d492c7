"""What `pipeline.extract()` returns: dlt's `ExtractInfo` of the package an extract made, with dlt's metrics
(items and bytes per root table, per resource and per file, the resources' DAG and hints) taken from what the
extract counted (`ExtractResult`) and the files its package lists (`PackageInfo.files`).

lakeload writes the pipeline state into the package's manifest, not as a `_dlt_pipeline_state` item: its metrics
hold one extract per package, where dlt's add a second one for that table.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from lakeload.extract.extractor import ExtractResult
from lakeload.extract.graph import dag
from lakeload.extract.resource import Resource
from lakeload.runtime.info import PackageInfo
from lakeload.runtime.step_info import ExtractInfo, ExtractMetrics, WriterMetrics


def extract_info(pipeline_name: str, result: ExtractResult, resources: list[Resource], package: PackageInfo,
                 window: tuple[datetime, datetime], first_run: bool) -> ExtractInfo:
    """The `ExtractInfo` of the package `result` made from `resources` between `window`'s two times."""
    created = window[1].timestamp()
    sizes: dict[str, int] = {}
    jobs: dict[str, WriterMetrics] = {}
    for file in package.files:
        table, size = str(file.get("table", "")), int(file.get("bytes") or 0)
        sizes[table] = sizes.get(table, 0) + size
        path = str(file.get("path") or "")
        if path:
            jobs[os.path.basename(path)] = WriterMetrics(path, int(file.get("rows") or 0), size, created, created)
    tables = {t: WriterMetrics("", n, sizes.get(t, 0), created, created) for t, n in result.items.items()}
    resource_metrics = {
        name: WriterMetrics("", n, sum(sizes.get(t, 0) for t in result.resource_tables.get(name, [])), created, created)
        for name, n in result.resource_items.items()
    }
    metrics = ExtractMetrics(started_at=window[0], finished_at=window[1], schema_name=result.schema_name,
                             job_metrics=jobs, table_metrics=tables, resource_metrics=resource_metrics,
                             dag=dag(resources), hints={r.name: _hints(r) for r in resources}, inputs=[])
    return ExtractInfo(pipeline_name, [package], {result.load_id: [metrics]}, first_run=first_run)


def _hints(resource: Resource) -> dict[str, Any]:
    """The hints dlt's metrics name for a resource: its write disposition and the keys it was given."""
    hints = resource.hints
    found: dict[str, Any] = {"write_disposition": hints.write_disposition}
    if hints.raw_primary_key is not None or hints.primary_key:
        found["primary_key"] = hints.raw_primary_key if hints.raw_primary_key is not None else list(hints.primary_key or ())
    if hints.merge_key:
        found["merge_key"] = list(hints.merge_key)
    return found
