"""`lakeload demo`: generated GitHub-like events -> local bucket on Spark -> row counts read back with DuckDB."""

from __future__ import annotations

import glob
import importlib.util
import logging
import os
import sys
import time
from urllib.parse import urlparse

logger = logging.getLogger("lakeload.cli")

PIPELINE_NAME = "github_demo"
RESOURCE_NAME = "events"
# file glob and DuckDB reader per loader file format (jsonl and csv files are gzipped: `.jsonl.gz`)
READERS: dict[str, tuple[str, str]] = {
    "parquet": ("*.parquet", "read_parquet"),
    "jsonl": ("*.jsonl*", "read_json"),
    "csv": ("*.csv*", "read_csv"),
}


def configure_logging(progress: str) -> None:
    """Log lines to stderr; lakeload's INFO progress lines only in `log` mode, warnings always; credentials masked."""
    logging.basicConfig(
        level=logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
        stream=sys.stderr,
    )
    logging.getLogger("lakeload").setLevel(logging.INFO if progress == "log" else logging.WARNING)
    from lakeload.config.log_secrets import install_secret_masking

    install_secret_masking(logging.getLogger().handlers)


def local_path(bucket_url: str) -> str:
    """The local folder of a bucket URL (`file://...`); other URLs are returned as they are."""
    if bucket_url.startswith("file://"):
        return urlparse(bucket_url).path
    return bucket_url


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def count_rows(dataset_path: str, tables: list[str], file_format: str) -> list[tuple[str, int]]:
    """Rows per table, counted by DuckDB over `<dataset_path>/<table>/*.<ext>` (0 when a table has no files)."""
    import duckdb

    pattern, reader = READERS[file_format]
    counts: list[tuple[str, int]] = []
    with duckdb.connect() as con:
        for table in tables:
            files = os.path.join(dataset_path, table, pattern)
            if not glob.glob(files):
                counts.append((table, 0))
                continue
            row = con.execute(f"SELECT count(*) FROM {reader}({_sql_string(files)}, union_by_name = true)").fetchone()
            counts.append((table, int(row[0]) if row else 0))
    return counts


def print_counts(counts: list[tuple[str, int]], source: str, elapsed: float, events: int) -> None:
    """Print the row counts as a rich table on a terminal, as aligned plain text otherwise."""
    from rich.console import Console

    console = Console()
    title = "Row counts read back with DuckDB"
    read_from = f"Files: {source}"
    footer = f"Total time: {elapsed:.2f} s ({events / max(elapsed, 1e-9):,.0f} events/s)"
    if console.is_terminal:
        from rich.table import Table

        table = Table(title=title, title_justify="left")
        table.add_column("table")
        table.add_column("rows", justify="right")
        for name, n in counts:
            table.add_row(name, str(n))
        console.print(table)
        console.print(read_from, markup=False, highlight=False, soft_wrap=True)
        console.print(footer, highlight=False)
        return
    width = max([len("table"), *(len(name) for name, _ in counts)])
    print(title)
    print(f"{'table':<{width}}  {'rows':>10}")
    for name, n in counts:
        print(f"{name:<{width}}  {n:>10}")
    print(read_from)
    print(footer)


def run_demo(
    events: int,
    bucket: str,
    dataset: str,
    file_format: str,
    pipelines_dir: str | None,
    progress: str,
) -> int:
    """Load `events` generated events into `bucket`/`dataset`, print the load info and row counts.

    Returns the exit code: 0 on success, 1 when the pipeline failed, 2 when tqdm is asked for but missing
    (errors are printed to stderr).
    """
    configure_logging(progress)
    started = time.perf_counter()
    if progress == "tqdm" and importlib.util.find_spec("tqdm") is None:
        print("--progress tqdm needs tqdm: pip install 'lakeload[tqdm]'", file=sys.stderr)
        return 2

    import duckdb

    import lakeload
    from lakeload.demo.events import generate_events
    from lakeload.destinations.impl.filesystem.configuration import normalize_bucket_url

    try:
        bucket_url = normalize_bucket_url(bucket)
        pipeline = lakeload.pipeline(
            PIPELINE_NAME,
            destination=lakeload.destinations.filesystem(bucket_url=bucket_url),
            dataset_name=dataset,
            pipelines_dir=pipelines_dir,
            progress=None if progress == "none" else progress,
        )
        data = lakeload.resource(generate_events(events), name=RESOURCE_NAME, write_disposition="replace")
        logger.info("loading %d events into %s/%s as %s", events, bucket_url, dataset, file_format)
        info = pipeline.run(data, loader_file_format=file_format)
        print(info)
        print()
        tables = [t["name"] for t in pipeline.default_schema.data_tables()]
        dataset_path = os.path.join(local_path(bucket_url), dataset)
        counts = count_rows(dataset_path, tables, file_format)
    except (lakeload.LakeloadError, duckdb.Error) as exc:
        print(f"lakeload demo failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        _stop_spark()
    source = os.path.join(dataset_path, "<table>", READERS[file_format][0])
    print_counts(counts, source, time.perf_counter() - started, events)
    return 0


def _stop_spark() -> None:
    """Stop the Spark session the demo started (the CLI process owns it), if any."""
    if "pyspark" not in sys.modules:
        return
    from lakeload.spark.deferred_session import active_session

    session = active_session()
    if session is not None:
        session.stop()
