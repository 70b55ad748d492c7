"""What `pipeline.extract()` and `pipeline.normalize()` return, side by side with dlt 1.31: dlt's `ExtractInfo`
(`loads_ids`, `load_packages`, `metrics` per load id, `asdict()`, `str()`) and `NormalizeInfo`.

dlt writes its pipeline state as a `_dlt_pipeline_state` item of the package (a second extract in its metrics);
lakeload keeps the state in the package's manifest: the notes leave that table out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from compat_harness import Ctx, assert_same

pytestmark = pytest.mark.usefixtures("spark")
STATE = "_dlt_pipeline_state"


def _shop(lib: Any) -> Any:
    @lib.resource(primary_key="id", write_disposition="merge")
    def pages() -> Any:
        for page in range(3):
            yield [{"id": page * 10 + i, "page": page, "tags": [{"t": i}]} for i in range(4)]

    @lib.transformer(data_from=pages)
    def details(page: list[dict[str, Any]]) -> Any:
        for row in page:
            yield {"id": row["id"], "detail": row["id"] + 1000}

    @lib.source
    def shop() -> Any:
        return pages, details

    return shop()


def _first_metrics(info: Any) -> dict[str, Any]:
    metrics = info.metrics[info.loads_ids[0]][0]
    return {
        "keys": sorted(metrics),
        "times": isinstance(metrics["started_at"], datetime) and metrics["started_at"] <= metrics["finished_at"],
        "schema_name": metrics["schema_name"],
        "tables": {t: m.items_count for t, m in metrics["table_metrics"].items() if t != STATE},
        "sized": all(m.file_size > 0 for t, m in metrics["table_metrics"].items()),
        "resources": {r: m.items_count for r, m in metrics["resource_metrics"].items() if r != STATE},
        "dag": sorted(metrics["dag"]),
        "hints": metrics["hints"],
        "jobs": len([j for j in metrics["job_metrics"] if not j.startswith(STATE)]),
    }


def _as_text(info: Any) -> str:
    text = str(info)
    for load_id in info.loads_ids:
        text = text.replace(load_id, "<load_id>")
    return text


def s_extract_info(ctx: Ctx) -> Any:
    p = ctx.pipeline("extract_info")
    info = p.extract(_shop(ctx.lib))
    flat = info.asdict()
    ctx.notes["extract"] = {
        "class": type(info).__name__, "loads": len(info.loads_ids), "text": _as_text(info),
        "package": [info.load_packages[0].load_id == info.loads_ids[0], info.load_packages[0].state],
        "pending": p.get_load_package_info(info.loads_ids[0]).state, "first_run": info.first_run,
        "pipeline": info.pipeline.pipeline_name, "metrics": _first_metrics(info),
        "asdict_keys": sorted(flat), "asdict_tables": sorted(m["table_name"] for m in flat["table_metrics"]
                                                            if m["table_name"] != STATE),
        "asdict_load_id": {m["load_id"] for m in flat["resource_metrics"]} == set(info.loads_ids),
    }
    normalized = p.normalize()
    ctx.notes["normalize"] = {"class": type(normalized).__name__, "same": normalized.loads_ids == info.loads_ids,
                              "rows": {t: n for t, n in normalized.row_counts.items() if t != STATE}}
    loaded = p.load()
    ctx.notes["load"] = {"same": loaded.loads_ids == info.loads_ids}
    run = p.run(ctx.lib.resource([{"id": 1}], name="more"))
    last = p.last_trace.last_extract_info
    ctx.notes["run"] = {"class": type(last).__name__, "extract_then_load": last.loads_ids == run.loads_ids,
                        "text": _as_text(last), "tables": _first_metrics(last)["tables"]}
    return p


def test_extract_returns_extract_info(tmp_path: Any) -> None:
    """`extract()` returns dlt's `ExtractInfo` (same text, metrics, dict keys), `normalize()` its `NormalizeInfo`,
    and a run's trace holds the extract's."""
    ours = assert_same(s_extract_info, tmp_path)
    assert ours.notes["extract"]["metrics"]["tables"] == {"pages": 12, "details": 12}
