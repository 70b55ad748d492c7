"""The Streamlit page of `lakeload pipeline <name> show` (run by `streamlit run`, not imported by lakeload).

    streamlit run lakeload/dashboard/app.py -- --pipeline github_demo [--pipelines-dir PATH]

`?sql=SELECT ...` in the page's URL fills the SQL box and runs it (a link to a query).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence

import pandas as pd
import streamlit as st

from lakeload.config.log_secrets import mask_secrets
from lakeload.dashboard.data import PipelineView
from lakeload.errors import LakeloadError


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", required=True)
    parser.add_argument("--pipelines-dir", default=None)
    return parser.parse_args(sys.argv[1:])


def _table(rows: Sequence[Mapping[str, object]], empty: str) -> None:
    """A static HTML table (its cells are in the page's DOM), or a note when there are no rows."""
    if rows:
        st.table(pd.DataFrame(rows))
    else:
        st.caption(empty)


def _history(view: PipelineView) -> None:
    st.header("Load history")
    history = view.load_history()
    _table([{**r, "status": "complete" if r["status"] == 0 else r["status"]} for r in history], "No loads yet.")
    per_load = view.rows_per_load()
    if per_load:
        st.subheader("Rows per load")
        frame = pd.DataFrame(per_load).pivot_table(index="load_id", columns="table", values="rows", fill_value=0)
        st.bar_chart(frame)
        _table(per_load, "")


def _schema(view: PipelineView) -> None:
    st.header(f"Schema {view.pipeline.default_schema.name}")
    _table(view.schema_columns(), "No tables yet.")


def _trace(view: PipelineView) -> None:
    st.header("Last run")
    trace = view.trace()
    if trace is None:
        st.caption("No run traced yet.")
        return
    bucket = f" at {trace['bucket_url']}" if trace.get("bucket_url") else ""
    st.write(f"Started {trace['started_at']}, destination {trace.get('destination_name')}{bucket}")
    spark_start = trace["spark_start"]
    start = [{"step": "spark start", "seconds": round(spark_start["elapsed"], 2), "error": ""}] if spark_start else []
    _table(start + [{"step": s["step"], "seconds": round(s["elapsed"], 2), "error": s.get("error") or ""} for s in trace["steps"]], "")
    _table([{"load_id": p["load_id"], "rows": sum(p["row_counts"].values()), "files": p["files"],
             "normalize_s": round(p["normalize_seconds"], 2), "load_s": round(p["load_seconds"], 2),
             "spark_tasks": p.get("spark_tasks", "")} for p in trace.get("packages", [])], "")


def _pending(view: PipelineView) -> None:
    st.header("Pending and failed packages")
    _table(view.pending_packages(), "None: every package was loaded.")


def _sql(view: PipelineView) -> None:
    st.header("SQL")
    preset = st.query_params.get("sql", "")
    sql = st.text_area("Query the dataset (DuckDB SQL over the bucket)", value=preset, key="sql")
    if st.button("Run") or (preset and sql == preset):
        try:
            columns, rows = view.query(sql)
        except LakeloadError as exc:
            st.error(mask_secrets(str(exc)))
            return
        _table([dict(zip(columns, r, strict=True)) for r in rows[:1000]], "No rows.")


def main() -> None:
    args = _args()
    st.set_page_config(page_title=f"lakeload: {args.pipeline}", layout="wide")
    st.title(f"Pipeline {args.pipeline}")
    try:
        view = PipelineView.open(args.pipeline, args.pipelines_dir)
        state = view.folder.state
        st.write(f"Dataset **{state.get('dataset_name')}** in {view.bucket_url()}, state version "
                 f"{state.get('_state_version', 0)}, schemas {', '.join(state.get('schema_names', []))}")
        _history(view)
        _schema(view)
        _trace(view)
        _pending(view)
        _sql(view)
    except LakeloadError as exc:
        st.error(mask_secrets(str(exc)))


if __name__ == "__main__":  # Streamlit runs the page as __main__
    main()
