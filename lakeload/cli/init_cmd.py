"""`lakeload init <source> <destination>`: start a project, as `dlt init` does.

    lakeload init generator filesystem                       # local folder ./_storage
    lakeload init filesystem filesystem --bucket s3          # S3: fill in .lakeload/secrets.toml
    lakeload init spark filesystem --table-format delta
    lakeload init generator duckdb                           # a DuckDB file ./generator_pipeline.duckdb

Writes `<source>_pipeline.py` (runnable as written), `.lakeload/config.toml` (the bucket, or the DuckDB database
file commented out: `<source>_pipeline.duckdb` by default), `.lakeload/secrets.toml` (every credential field of the
bucket kind, commented placeholders; none for DuckDB) and `requirements.txt` (lakeload with the right extras). An
existing file is never overwritten without `--force`. `--bucket` and `--table-format` are the filesystem's: with
`duckdb` they are refused (`InitOptionError`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lakeload.cli.init_templates import SCRIPTS
from lakeload.errors import LakeloadError

BUCKETS = {  # kind -> (example bucket_url, protocol of its credentials, pip extra)
    "file": ("_storage", None, None),
    "s3": ("s3://<bucket-name>/<path>", "s3", "s3"),
    "gs": ("gs://<bucket-name>/<path>", "gs", "gs"),
    "az": ("az://<container-name>/<path>", "az", "az"),
    "sftp": ("sftp://<host>/<path>", "sftp", "sftp"),
}


DESTINATIONS = ("filesystem", "duckdb")


class InitTargetExistsError(LakeloadError):
    """`lakeload init` would overwrite files; `--force` allows it."""


class InitOptionError(LakeloadError):
    """An option of `lakeload init` that the chosen destination does not take (`--bucket`, `--table-format` with duckdb)."""


def register(commands: Any) -> None:
    """Add the `init` command to the top-level subparsers."""
    command = commands.add_parser(
        "init", help="start a project: a runnable pipeline script, .lakeload/config.toml, secrets.toml, requirements.txt",
        description="Write a runnable pipeline script for SOURCE loading into DESTINATION, with its configuration.",
    )
    command.add_argument("source", choices=sorted(SCRIPTS), metavar="SOURCE",
                         help=f"what to load: {', '.join(sorted(SCRIPTS))}")
    command.add_argument("destination", choices=DESTINATIONS, metavar="DESTINATION",
                         help="filesystem (a folder or bucket) or duckdb (a DuckDB database file)")
    command.add_argument("--bucket", choices=sorted(BUCKETS), default=None,
                         help="the bucket kind of the filesystem destination (default: file, a local folder)")
    command.add_argument("--table-format", choices=("delta", "iceberg"), default=None,
                         help="load Delta or Iceberg tables (filesystem destination)")
    command.add_argument("--force", action="store_true", help="overwrite files that exist")
    command.add_argument("--dir", default=".", metavar="PATH", help="the project folder (default: the current one)")
    command.set_defaults(handler=run_init)


def run_init(args: argparse.Namespace) -> int:
    try:
        written = init_project(args.source, args.bucket, args.table_format, args.force, args.dir, args.destination)
    except LakeloadError as exc:
        print(f"lakeload: error: {exc}", file=sys.stderr)
        return 1
    print("Wrote " + ", ".join(written) + ".")
    step = "fill in .lakeload/secrets.toml and bucket_url in .lakeload/config.toml, then " if args.bucket not in (None, "file") else ""
    print(f"Next: pip install -r requirements.txt; {step}python {args.source}_pipeline.py")
    _start_engine_ahead()
    return 0


def _start_engine_ahead() -> None:
    """Start lakeload's warm Spark engine in the background for the run that follows (when it would start one)."""
    try:
        from lakeload.spark.warm_engine import start_ahead

        started = start_ahead()
    except (ImportError, LakeloadError):  # no pyspark yet (requirements not installed), or a bad [spark] setting
        return
    if started:
        print("Starting lakeload's local Spark engine in the background for your runs (`lakeload spark status`; "
              "[spark] warm = false turns this off).")


def init_project(source: str, bucket: str | None, table_format: str | None, force: bool, folder: str,
                 destination: str = "filesystem") -> list[str]:
    """Write the project files into `folder`; returns their paths relative to it."""
    if destination == "duckdb":
        given = {option: value for option, value in (("--bucket", bucket), ("--table-format", table_format)) if value}
        if given:
            options = " ".join(f"{option} {value}" for option, value in given.items())
            raise InitOptionError(
                f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} for the filesystem destination: the duckdb "
                f"destination loads into one database file ({source}_pipeline.duckdb). Fix: leave out {' and '.join(given)}, "
                f"or load into a bucket: lakeload init {source} filesystem {options}"
            )
    bucket = bucket or "file"
    files = {
        f"{source}_pipeline.py": script(source, table_format, destination),
        os.path.join(".lakeload", "config.toml"): config_toml(source, bucket, destination),
        os.path.join(".lakeload", "secrets.toml"): secrets_toml(bucket, destination),
        "requirements.txt": requirements(bucket, table_format),
    }
    existing = [name for name in files if os.path.exists(os.path.join(folder, name))]
    if existing and not force:
        raise InitTargetExistsError(f"{', '.join(existing)} exist(s) in {os.path.abspath(folder)}. Fix: pass --force "
                                    "to overwrite, or run lakeload init in another folder (--dir).")
    for name, text in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return list(files)


def script(source: str, table_format: str | None, destination: str = "filesystem") -> str:
    hint = f', table_format="{table_format}"' if table_format else ""
    where = (f"loads into the DuckDB database {source}_pipeline.duckdb in this folder" if destination == "duckdb"
             else "the bucket and its credentials are in .lakeload/*.toml")
    return SCRIPTS[source].format(table_format_arg=hint, run_table_format_arg=hint, destination=destination, where=where)


def config_toml(source: str, bucket: str, destination: str = "filesystem") -> str:
    lines = ["# lakeload reads this file (and .lakeload/secrets.toml) from the folder you run in.", ""]
    if destination == "duckdb":
        lines += ["[destination.duckdb]",
                  f'# credentials = "{source}_pipeline.duckdb"  # the database file (the default: <pipeline_name>.duckdb here)',
                  '# replace_strategy = "truncate-and-insert"  # or "insert-from-staging"']
    else:
        lines += ["[destination.filesystem]", f'bucket_url = "{BUCKETS[bucket][0]}"']
    if source == "filesystem":
        lines += ["", "[sources.filesystem]", 'bucket_url = "sample_data"  # the folder or bucket to read files from']
    lines += ["", "[spark]", '# master = "local[*]"  # or spark://host:7077, yarn, k8s://...', ""]
    return "\n".join(lines)


def secrets_toml(bucket: str, destination: str = "filesystem") -> str:
    """Every credential field of the bucket kind, as commented placeholders (none for a local folder or DuckDB)."""
    protocol = BUCKETS[bucket][1]
    lines = ["# Secrets: keep this file out of version control.", ""]
    if destination == "duckdb":
        return "\n".join(lines + ["# A local DuckDB database file needs no credentials.", ""])
    if protocol is None:
        return "\n".join(lines + ["# A local folder needs no credentials.", ""])
    from lakeload.config.bucket_credentials import credentials_class_for

    cls = credentials_class_for(protocol)
    assert cls is not None
    lines.append("[destination.filesystem.credentials]")
    lines += [f'# {name} = "<{name}>"' for name in cls.field_names()]
    return "\n".join(lines + [""])


def requirements(bucket: str, table_format: str | None) -> str:
    extras = [e for e in (BUCKETS[bucket][2], {"delta": "deltalake", "iceberg": "iceberg"}.get(table_format or "")) if e]
    return f"lakeload[{','.join(extras)}]\n" if extras else "lakeload\n"
