"""The one registry of configuration sections and keys lakeload reads, used to catch typos.

Every `resolve(sections, key)` / `resolve_section(sections, key)` call in lakeload must name a key declared
here: the resolver records each lookup (`note_lookup`), and the test suite fails on one that is not declared
(see `unregistered_lookups`). Credential fields are not listed by hand: they are the fields of the typed
credential dataclasses (`lakeload.config.bucket_credentials`). A key added here also needs its type, default and
description in `lakeload.runtime.key_reference` (the configuration reference; `tests/config/test_key_docs.py`).

A `Section` also lists what dlt reads in the same place (a `.dlt/` project may set it) so that such keys are
recognized as dlt's, never reported as typos; `tests/config/test_known_keys.py` compares these lists with
dlt's own configuration classes.

>>> spec_at(("destination", "production_bucket")).keys >= {"bucket_url", "layout"}
True
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

logger = logging.getLogger("lakeload.config")


@dataclass(frozen=True)
class Section:
    """What may appear in one configuration section.

    keys: values lakeload reads here (also tables such as `kwargs` or `credentials`).
    free: keys whose content lakeload passes on unchecked (`kwargs`, `[spark.conf]`).
    nested: sub-sections with their own spec, by name; `any_child` is the spec of every other sub-table
        (the destinations under `[destination]`).
    dlt_keys: keys dlt reads here that lakeload does not use: never reported as typos.
    strict: every unknown key is reported; otherwise only near-misses of a known key (dlt reads many more).
    open_tables: unknown sub-tables belong to someone else (`[sources.<your source>]`) unless they are a
        near-miss of a known one.
    """

    keys: frozenset[str] = frozenset()
    free: frozenset[str] = frozenset()
    nested: Mapping[str, Section] = field(default_factory=dict)
    any_child: Section | None = None
    dlt_keys: frozenset[str] = frozenset()
    strict: bool = True
    open_tables: bool = False

    def child(self, name: str) -> Section | None:
        """The spec of sub-section `name`, or None when it has none."""
        return self.nested.get(name, self.any_child)


@functools.lru_cache(maxsize=1)
def credential_fields() -> frozenset[str]:
    """Every credential field of every bucket protocol (the typed credential dataclasses' fields)."""
    from lakeload.config.bucket_credentials import credential_classes

    return frozenset(name for cls in credential_classes() for name in cls.field_names())


# dlt's credential fields that lakeload has no use for (Hugging Face; SFTP's Python-object options)
DLT_CREDENTIAL_KEYS = frozenset(
    {"hf_token", "hf_endpoint", "sftp_auth_strategy", "sftp_disabled_algorithms", "sftp_pkey", "sftp_sock",
     "sftp_transport_factory"}
)
FILESYSTEM_KEYS = frozenset(
    {"bucket_url", "layout", "extra_placeholders", "credentials", "kwargs", "client_kwargs",
     "deltalake_storage_options", "max_state_files", "always_refresh_views", "destination_type",
     # read by the DuckDB destination (a [destination.<name>] table has the same spec whatever its type)
     "replace_strategy", "staging_dataset_name_layout", "enable_dataset_name_normalization"}
)
FILESYSTEM_FREE = frozenset({"kwargs", "client_kwargs", "deltalake_storage_options", "extra_placeholders"})
DLT_FILESYSTEM_KEYS = frozenset(
    {"as_staging_destination", "config_kwargs", "current_datetime", "dataset_name", "default_schema_name",
     "deltalake_configuration", "deltalake_streamed_exec", "destination_name",
     "environment", "iceberg_namespace_properties", "iceberg_table_properties", "iceberg_use_catalog_purge",
     "info_tables_query_threshold", "legacy_db_path", "local_dir", "pipeline_name", "pipeline_working_dir",
     "read_only", "warn_unsafe_layout_separators"}
)
# `[destination.<name>]` keys of the retry policy (see `lakeload.kernel.filesystem.retry.RetryPolicy`) -> its fields
RETRY_KEYS = {
    "retry_attempts": "attempts",
    "retry_initial_backoff": "initial_backoff",
    "retry_max_backoff": "max_backoff",
    "retry_jitter": "jitter",
    "connect_timeout": "connect_timeout",
    "read_timeout": "read_timeout",
    "unreachable_timeout": "unreachable_timeout",
}
# dlt's file rotation keys of `[data_writer]` (`lakeload.config.data_writer`): lakeload reads them too
DLT_DATA_WRITER_KEYS = frozenset({"buffer_max_items", "file_max_items", "file_max_bytes"})


@functools.lru_cache(maxsize=1)
def root() -> Section:
    """The spec of a whole configuration file (or of a pipeline-scoped section `[<pipeline_name>]`)."""
    credentials = Section(keys=credential_fields(), dlt_keys=DLT_CREDENTIAL_KEYS)
    filesystem_keys = FILESYSTEM_KEYS | frozenset(RETRY_KEYS)
    filesystem = Section(filesystem_keys, FILESYSTEM_FREE, {"credentials": credentials}, dlt_keys=DLT_FILESYSTEM_KEYS)
    # [destination] holds one table per destination, and fallbacks for all of them (DESTINATION__CREDENTIALS__...)
    destination = Section(
        filesystem_keys, FILESYSTEM_FREE, {"credentials": credentials}, any_child=filesystem,
        dlt_keys=DLT_FILESYSTEM_KEYS, strict=False,
    )
    spark = Section(
        frozenset({"master", "conf", "working_url", "working_credentials", "working_kwargs", "working_client_kwargs",
                   "log_file", "mode", "remote", "class_archive", "lazy_jit", "warm", "warm_idle_seconds"}),
        frozenset({"conf", "working_kwargs", "working_client_kwargs"}),
        {"working_credentials": credentials},
    )
    files_source = Section(
        frozenset({"bucket_url", "credentials", "kwargs", "client_kwargs"}), frozenset({"kwargs", "client_kwargs"}),
        {"credentials": credentials}, dlt_keys=frozenset({"file_glob", "files_per_page", "extract_content", "incremental"}),
        strict=False, open_tables=True,
    )
    data_writer = Section(frozenset({"disable_compression"}) | DLT_DATA_WRITER_KEYS, strict=False, open_tables=True)
    return Section(
        nested={
            "destination": destination,
            "spark": spark,
            "sources": Section(nested={"filesystem": files_source}, strict=False, open_tables=True),
            "extract": Section(  # [extract.data_writer] is not read (as dlt 1.31: extract reads [sources.<section>.data_writer])
                frozenset({"file_max_bytes", "next_item_mode", "max_parallel_items"}),
                dlt_keys=DLT_DATA_WRITER_KEYS | {"workers", "futures_poll_interval"},
                strict=False, open_tables=True,
            ),
            "normalize": Section(nested={"data_writer": data_writer}, strict=False, open_tables=True),
            "data_writer": data_writer,
            "pipeline": Section(frozenset({"lock", "lock_timeout"})),  # one run per working folder (runtime/lock.py)
            "load": Section(  # dlt's [load]: lakeload reads truncate_staging_dataset (the DuckDB destination's staging)
                frozenset({"truncate_staging_dataset"}),
                dlt_keys=frozenset({"auto_abort_on_terminal_error", "parallelism_strategy", "pool_type", "raise_on_failed_jobs",
                                    "raise_on_max_retries", "run_sleep", "start_method", "start_new_jobs_on_signal", "workers"}),
                strict=False,
            ),
            "schema": Section(  # dlt's [schema]: the naming convention of new schemas
                frozenset({"naming"}),
                dlt_keys=frozenset({"allow_identifier_change_on_table_with_data", "json_normalizer", "use_break_path_on_normalize"}),
                strict=False,
            ),
            "iceberg_catalog": Section(  # dlt's keys (lakeload.iceberg.catalog); the config table goes to pyiceberg
                frozenset({"iceberg_catalog_name", "iceberg_catalog_type", "iceberg_catalog_config"}),
                frozenset({"iceberg_catalog_config"}),
            ),
        },
        strict=False, open_tables=True,
    )


# Top-level sections of dlt that lakeload does not read: never taken for a misspelled lakeload section.
DLT_SECTIONS = frozenset({"runtime", "pipelines", "providers", "dlthub", "telemetry", "tests"})


def spec_at(sections: tuple[str, ...]) -> Section | None:
    """The spec of the section `sections` names (`("destination", "<any name>")`), or None when unknown."""
    spec: Section | None = root()
    for name in sections:
        spec = spec.child(name) if spec is not None else None
    return spec


# Sections whose keys the user defines: the arguments of source and resource functions, injected from
# `sources.<section>.<source or resource name>.<argument>` (`*` is any one name). Lakeload's own keys under
# [sources] (`sources.filesystem.bucket_url`) are two levels deep and stay checked against `root()`.
USER_SECTIONS: tuple[tuple[str, ...], ...] = (("sources", "*", "*"),)
# Where extract looks up dlt's writer settings of a source (`lakeload.config.data_writer`): the keys of `[data_writer]`,
# under `sources.<section>.<source name>` (and every shorter path, as dlt).
WRITER_SECTIONS: tuple[tuple[str, ...], ...] = (("sources", "*", "*", "data_writer"),)


def _matches(sections: tuple[str, ...], patterns: tuple[tuple[str, ...], ...]) -> bool:
    return any(
        len(sections) == len(pattern) and all(p in ("*", s) for p, s in zip(pattern, sections, strict=True))
        for pattern in patterns
    )


def is_user_section(sections: tuple[str, ...]) -> bool:
    """Whether `sections` is one of `USER_SECTIONS` (any key looked up there is a user-defined argument).

    >>> is_user_section(("sources", "crm", "contacts")), is_user_section(("sources", "filesystem"))
    (True, False)
    """
    return _matches(sections, USER_SECTIONS)


def is_registered(sections: tuple[str, ...], key: str) -> bool:
    """Whether `key` in section `sections` is declared here (a lookup lakeload may make)."""
    if is_user_section(sections):
        return True
    if _matches(sections, WRITER_SECTIONS):
        sections = ("data_writer",)
    spec = spec_at(sections)
    return spec is not None and (key in spec.keys or key in spec.nested)


_looked_up: set[tuple[tuple[str, ...], str]] = set()
_unregistered: set[tuple[tuple[str, ...], str]] = set()


def note_lookup(sections: tuple[str, ...], key: str) -> None:
    """Called by the resolver for every lookup; remembers it, and lookups of keys this registry does not declare."""
    if (sections, key) in _looked_up:
        return
    _looked_up.add((sections, key))
    if not is_registered(sections, key):
        _unregistered.add((sections, key))
        logger.debug("configuration key %s is looked up but not declared in lakeload.config.known_keys", (sections, key))


def unregistered_lookups(clear: bool = False) -> set[tuple[tuple[str, ...], str]]:
    """Lookups made so far of keys not declared here (a lakeload bug: declare them in `root()`)."""
    found = set(_unregistered)
    if clear:
        _unregistered.clear()
    return found


def looked_up() -> set[tuple[tuple[str, ...], str]]:
    """Every `(sections, key)` the resolver has looked up in this process."""
    return set(_looked_up)
