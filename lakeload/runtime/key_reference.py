"""The documentation of every configuration key lakeload reads: type, default and one line (`KeyDoc`).

One entry per key of the known-keys registry (`lakeload.config.known_keys.root()`), by section path; the
`[destination]` fallbacks share the entries of `[destination.<name>]`, and `[data_writer]` (and extract's
`[sources.<section>.data_writer]`) those of `[normalize.data_writer]`. dlt's keys (`dlt_keys`) are not documented here, and credential fields are documented
from their typed dataclasses (`lakeload.config.key_docs.credential_key_docs`). `docs/hooks.py` builds the
configuration reference from this; `tests/config/test_key_docs.py` checks that every key has an entry and that the
documented defaults are the ones the resolving functions apply.

Defaults are read from the code that applies them: the settings dataclasses' field defaults (`WarmSettings`,
`SparkSettings`, `EngineSettings`, `LockPolicy`, `CatalogSettings`, `FilesystemConfiguration`, `RetryPolicy`) and
named constants; this module sits in the `runtime` layer so that it may import them all.

>>> key_doc(("spark",), "warm_idle_seconds")
KeyDoc(type='float', default='900.0', doc='Seconds a warm engine stays up without a run before it stops.')
>>> key_doc(("destination", "production_bucket"), "retry_attempts").default
'4'
"""

from __future__ import annotations

import functools

from lakeload.config.data_writer import DataWriterSettings
from lakeload.config.key_docs import KeyDoc, default_text, from_field, retry_key_docs
from lakeload.destinations.impl.duckdb.factory import REPLACE_STRATEGIES
from lakeload.destinations.impl.filesystem.configuration import FilesystemConfiguration
from lakeload.extract.writer import FILE_MAX_BYTES
from lakeload.iceberg.catalog import CatalogSettings
from lakeload.runtime.lock import LockPolicy
from lakeload.spark.connect_session import EngineSettings
from lakeload.spark.settings import DEFAULT_MASTER, SparkSettings
from lakeload.spark.warm_engine import WarmSettings

ANY_NAME = "<name>"  # stands for any destination name in a section path
TABLE = "table"  # a TOML table, or a JSON object in an environment variable
CREDENTIALS = "table or str"  # the fields of the protocol's credentials, or a native string
REQUIRED = "(required)"


def _destination() -> dict[str, KeyDoc]:
    fs = FilesystemConfiguration
    return {
        "bucket_url": KeyDoc("str", REQUIRED, "Filesystem destination: a local path or a bucket URL (s3://, gs://, az://, sftp://, memory://)."),
        "layout": from_field(fs, "layout", "File names under the dataset folder, from placeholders ({table_name}, {load_id}, ...)."),
        "extra_placeholders": KeyDoc(TABLE, "", "Values of your own placeholders in `layout`."),
        "credentials": KeyDoc(CREDENTIALS, "", "The bucket's credentials (fields by protocol, below); DuckDB: the database file."),
        "kwargs": from_field(fs, "kwargs", "Arguments of the fsspec filesystem.", TABLE),
        "client_kwargs": from_field(fs, "client_kwargs", "`client_kwargs` of the fsspec filesystem (e.g. botocore's).", TABLE),
        "deltalake_storage_options": from_field(fs, "deltalake_storage_options", "Storage options passed to delta-rs for Delta tables.", TABLE),
        "max_state_files": from_field(fs, "max_state_files", "Pipeline state files kept in the bucket per pipeline (0 or less: keep all)."),
        "always_refresh_views": from_field(fs, "always_refresh_views", "List the files again before every SQL query on the dataset."),
        "destination_type": KeyDoc("str", "", "`filesystem` or `duckdb`: the type of a destination given by a name of your own."),
        "replace_strategy": KeyDoc("str", default_text(REPLACE_STRATEGIES[0]), "DuckDB: how `replace` loads (`truncate-and-insert` or `insert-from-staging`)."),
        "staging_dataset_name_layout": KeyDoc("str", default_text("%s_staging"), "DuckDB: the staging dataset's name, `%s` standing for the dataset's."),
        "enable_dataset_name_normalization": KeyDoc("bool", default_text(True), "DuckDB: the dataset name goes through the naming convention."),
        **retry_key_docs(),
    }


def _spark() -> dict[str, KeyDoc]:
    return {
        "master": KeyDoc("str", default_text(DEFAULT_MASTER), "Spark master of the session lakeload starts (`local[4]`, `spark://host:7077`)."),
        "conf": KeyDoc(TABLE, "{}", "Spark settings of the session lakeload starts (`\"spark.sql.shuffle.partitions\" = \"8\"`)."),
        "working_url": KeyDoc("str", "(the pipeline folder)", "Where load packages go when executors run elsewhere: a shared folder or a bucket URL."),
        "working_credentials": KeyDoc(CREDENTIALS, "", "Credentials of the `working_url` bucket (fields by protocol, below)."),
        "working_kwargs": KeyDoc(TABLE, "{}", "Arguments of the fsspec filesystem of `working_url`."),
        "working_client_kwargs": KeyDoc(TABLE, "{}", "`client_kwargs` of the fsspec filesystem of `working_url`."),
        "log_file": from_field(SparkSettings, "log_file", "File Spark's and PySpark's log records go to, instead of the terminal."),
        "mode": from_field(EngineSettings, "mode", "`auto` (a running engine or `remote`, else in-process), `local` or `remote`."),
        "remote": KeyDoc("str", "", "Spark Connect URL (`sc://host:15002`); the `SPARK_REMOTE` variable is read too."),
        "class_archive": from_field(SparkSettings, "class_archive", "Start the JVM with a class-data archive (faster start)."),
        "lazy_jit": from_field(SparkSettings, "lazy_jit", "A local JVM compiles only code that stays hot (faster short runs)."),
        "warm": from_field(WarmSettings, "enabled", "Keep a local engine running after a run, for the next runs to attach to."),
        "warm_idle_seconds": from_field(WarmSettings, "idle_seconds", "Seconds a warm engine stays up without a run before it stops."),
    }


def _files_source() -> dict[str, KeyDoc]:
    return {
        "bucket_url": KeyDoc("str", REQUIRED, "Files source: the folder or bucket URL files are read from."),
        "credentials": KeyDoc(CREDENTIALS, "", "The bucket's credentials (fields by protocol, below)."),
        "kwargs": KeyDoc(TABLE, "{}", "Arguments of the fsspec filesystem."),
        "client_kwargs": KeyDoc(TABLE, "{}", "`client_kwargs` of the fsspec filesystem."),
    }


def _data_writer() -> dict[str, KeyDoc]:
    """dlt's writer settings; `[sources.<section>.data_writer]` (extract's, per source) has the same keys."""
    return {
        "disable_compression": KeyDoc("bool", default_text(False), "Write normalize's files uncompressed."),
        "file_max_items": from_field(DataWriterSettings, "file_max_items", "Items (rows) per file: extract (under [sources...]) and normalize begin a new file after it, as dlt."),
        "file_max_bytes": from_field(DataWriterSettings, "file_max_bytes", "Bytes at which a file is closed (extract: else [extract] file_max_bytes; normalize: checked per chunk)."),
        "buffer_max_items": from_field(DataWriterSettings, "buffer_max_items", "dlt's buffer: file_max_items is checked whenever this many items were written."),
    }


@functools.lru_cache(maxsize=1)
def key_docs() -> dict[tuple[tuple[str, ...], str], KeyDoc]:
    """`(section path, key)` -> its documentation, for every key lakeload reads (`<name>`: any destination)."""
    sections: dict[tuple[str, ...], dict[str, KeyDoc]] = {
        ("destination",): _destination(),
        ("destination", ANY_NAME): _destination(),
        ("spark",): _spark(),
        ("sources", "filesystem"): _files_source(),
        ("extract",): {
            "file_max_bytes": KeyDoc("int", default_text(FILE_MAX_BYTES), "Size in bytes at which extract starts a new file (more files, more Spark tasks)."),
            "next_item_mode": KeyDoc("str", "round_robin", "dlt's order of items: `round_robin` (resources and transformer calls take turns) or `fifo`."),
            "max_parallel_items": KeyDoc("int", "20", "Generators made (transformer calls, forks) from which round robin takes the newest, as dlt."),
        },
        ("pipeline",): {
            "lock": from_field(LockPolicy, "mode", "When another process runs the pipeline: `wait` for it or `fail` at once."),
            "lock_timeout": from_field(LockPolicy, "timeout", "Seconds to wait for the pipeline's lock before failing."),
        },
        ("load",): {
            "truncate_staging_dataset": KeyDoc("bool", default_text(False), "DuckDB: empty the staging dataset's tables after each load."),
        },
        ("schema",): {
            "naming": KeyDoc("str", "(the destination's, else \"snake_case\")", "Naming convention of new schemas (`snake_case`, `direct`, ...)."),
        },
        ("iceberg_catalog",): {
            "iceberg_catalog_name": from_field(CatalogSettings, "name", "Name of the Iceberg catalog."),
            "iceberg_catalog_type": from_field(CatalogSettings, "type", "`sql` or `rest`: the kind of Iceberg catalog."),
            "iceberg_catalog_config": KeyDoc(TABLE, "", "The catalog's pyiceberg properties (`uri`, `warehouse`, ...)."),
        },
    }
    sections[("normalize", "data_writer")] = sections[("data_writer",)] = _data_writer()
    return {(path, key): doc for path, docs in sections.items() for key, doc in docs.items()}


def key_doc(sections: tuple[str, ...], key: str) -> KeyDoc | None:
    """The documentation of `key` in section `sections` (a destination's name matches `<name>`), or None."""
    docs = key_docs()
    if len(sections) == 2 and sections[0] == "destination":
        sections = ("destination", ANY_NAME)
    return docs.get((sections, key))
