"""The `lakeload` command line.

    lakeload demo                          # 100k GitHub-like events into ./_storage on local Spark
    lakeload demo --events 5000 --format jsonl --bucket /tmp/bucket
    lakeload config show --pipeline github_demo  # every setting, its source, secrets masked
    lakeload pipeline github_demo drop-pending-packages  # give up packages that cannot be loaded
    lakeload init generator filesystem --bucket s3         # a runnable pipeline script and its configuration
    lakeload spark start                   # a warm local Spark (Connect server) that later runs use

Also runnable as `python -m lakeload.cli.main ...` or `python -m lakeload.cli ...`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from lakeload import __version__
from lakeload.cli.config_show import register as register_config
from lakeload.cli.init_cmd import register as register_init
from lakeload.cli.pipeline_cmd import register as register_pipeline
from lakeload.cli.spark_cmd import register as register_spark

FORMATS = ("jsonl", "parquet", "csv")
PROGRESS_KINDS = ("log", "tqdm", "rich", "none")


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (underscores allowed, as in `100_000`)."""
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def default_progress() -> str:
    """`rich` bars when stderr is a terminal, plain `log` lines otherwise (CI, pipes, files)."""
    return "rich" if sys.stderr.isatty() else "log"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `lakeload` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="lakeload",
        description="lakeload: dlt's API and bucket layout, with normalize and load running on Apache Spark.",
    )
    parser.add_argument("--version", action="version", version=f"lakeload {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = commands.add_parser(
        "demo",
        help="load generated GitHub-like events into a local bucket and count the rows with DuckDB",
        description=(
            "Generate N nested, GitHub-like events (resource 'events'), load them with the pipeline "
            "'github_demo' into <bucket>/<dataset>/ on an embedded local Spark session (local[*]; set "
            "SPARK__MASTER to change it), print the load info, then read the files back with DuckDB and "
            "print the row count of every table. Each run replaces the demo's tables."
        ),
        epilog="Needs Java 17+ for Spark (scripts/setup.sh installs it when missing).",
    )
    demo.add_argument(
        "--events", type=_positive_int, default=100_000, metavar="N",
        help="number of events to generate (default: %(default)s)",
    )
    demo.add_argument(
        "--bucket", default="./_storage", metavar="PATH",
        help="bucket: a local folder or file:// URL to load into (default: %(default)s)",
    )
    demo.add_argument(
        "--dataset", default="github_events", metavar="NAME",
        help="dataset name, i.e. the folder inside the bucket (default: %(default)s)",
    )
    demo.add_argument(
        "--format", choices=FORMATS, default="parquet", dest="file_format",
        help="loader file format of the data files (default: %(default)s)",
    )
    demo.add_argument(
        "--pipelines-dir", default=None, metavar="PATH",
        help="working folder for the pipeline's state, schemas and load packages (default: ~/.lakeload/pipelines)",
    )
    demo.add_argument(
        "--progress", choices=PROGRESS_KINDS, default=None,
        help="progress display: log lines, tqdm or rich bars, or none "
        "(default: rich when stderr is a terminal, log otherwise)",
    )
    register_config(commands)
    register_init(commands)
    register_pipeline(commands)
    register_spark(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `lakeload` command; returns the process exit code."""
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from lakeload.cli.demo import run_demo

        return run_demo(
            events=args.events,
            bucket=args.bucket,
            dataset=args.dataset,
            file_format=args.file_format,
            pipelines_dir=args.pipelines_dir,
            progress=args.progress or default_progress(),
        )
    if args.command in ("config", "pipeline", "init", "spark"):
        return int(args.handler(args))
    raise AssertionError(f"unhandled command {args.command!r}")  # pragma: no cover - argparse rejects others


if __name__ == "__main__":
    sys.exit(main())
