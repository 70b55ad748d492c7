"""`lakeload init <source> <destination>`: start a project, as `dlt init` does.

    lakeload init generator filesystem                       # local folder ./_storage
    lakeload init filesystem filesystem --bucket s3          # S3: fill in .lakeload/secrets.toml
    lakeload init spark filesystem --table-format delta

Writes `<source>_pipeline.py` (runnable as written), `.lakeload/config.toml` (the bucket), `.lakeload/secrets.toml`
(every credential field of the bucket kind, commented placeholders) and `requirements.txt` (lakeload with the
right extras). An existing file is never overwritten without `--force`.
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


class InitTargetExistsError(LakeloadError):
    """`lakeload init` would overwrite files; `--force` allows it."""


def register(commands: Any) -> None:
    """Add the `init` command to the top-level subparsers."""
    command = commands.add_parser(
        "init", help="start a project: a runnable pipeline script, .lakeload/config.toml, secrets.toml, requirements.txt",
        description="Write a runnable pipeline script for SOURCE loading into DESTINATION, with its configuration.",
    )
    command.add_argument("source", choices=sorted(SCRIPTS), metavar="SOURCE",
                         help=f"what to load: {', '.join(sorted(SCRIPTS))}")
    command.add_argument("destination", choices=("filesystem",), metavar="DESTINATION", help="filesystem")
    command.add_argument("--bucket", choices=sorted(BUCKETS), default="file",
                         help="the bucket kind (default: file, a local folder)")
    command.add_argument("--table-format", choices=("delta", "iceberg"), default=None,
                         help="load Delta or Iceberg tables")
    command.add_argument("--force", action="store_true", help="overwrite files that exist")
    command.add_argument("--dir", default=".", metavar="PATH", help="the project folder (default: the current one)")
    command.set_defaults(handler=run_init)


def run_init(args: argparse.Namespace) -> int:
    try:
        written = init_project(args.source, args.bucket, args.table_format, args.force, args.dir)
    except LakeloadError as exc:
        print(f"lakeload: error: {exc}", file=sys.stderr)
        return 1
    print("Wrote " + ", ".join(written) + ".")
    step = "fill in .lakeload/secrets.toml and bucket_url in .lakeload/config.toml, then " if args.bucket != "file" else ""
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


def init_project(source: str, bucket: str, table_format: str | None, force: bool, folder: str) -> list[str]:
    """Write the project files into `folder`; returns their paths relative to it."""
    files = {
        f"{source}_pipeline.py": script(source, table_format),
        os.path.join(".lakeload", "config.toml"): config_toml(source, bucket),
        os.path.join(".lakeload", "secrets.toml"): secrets_toml(bucket),
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


def script(source: str, table_format: str | None) -> str:
    hint = f', table_format="{table_format}"' if table_format else ""
    return SCRIPTS[source].format(table_format_arg=hint, run_table_format_arg=hint)


def config_toml(source: str, bucket: str) -> str:
    url = BUCKETS[bucket][0]
    lines = ["# lakeload reads this file (and .lakeload/secrets.toml) from the folder you run in.", "",
             "[destination.filesystem]", f'bucket_url = "{url}"']
    if source == "filesystem":
        lines += ["", "[sources.filesystem]", 'bucket_url = "sample_data"  # the folder or bucket to read files from']
    lines += ["", "[spark]", '# master = "local[*]"  # or spark://host:7077, yarn, k8s://...', ""]
    return "\n".join(lines)


def secrets_toml(bucket: str) -> str:
    """Every credential field of the bucket kind, as commented placeholders (none for a local folder)."""
    protocol = BUCKETS[bucket][1]
    lines = ["# Secrets: keep this file out of version control.", ""]
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
