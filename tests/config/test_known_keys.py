"""The registry of known configuration keys (`lakeload.config.known_keys`) stays true to the code and to dlt.

Drift in either direction is caught: a `resolve(...)` call naming an undeclared key (here for every caller,
and in every test through the `declared_config_keys` fixture of tests/conftest.py), a declared key nobody
looks up, and dlt keys listed as dlt's that dlt does not have (or dlt keys missing from the lists).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import lakeload
from lakeload.config import known_keys
from lakeload.config.known_keys import (
    DLT_CREDENTIAL_KEYS,
    DLT_DATA_WRITER_KEYS,
    DLT_FILESYSTEM_KEYS,
    FILESYSTEM_KEYS,
    credential_fields,
    spec_at,
)
from lakeload.errors import ConfigurationError

ROOT = Path(__file__).resolve().parents[2]
# modules whose lookups `drive_every_resolver_caller` makes (through their public or pipeline-internal calls)
RESOLVER_CALLERS = {
    "lakeload/config/inject.py",
    "lakeload/config/data_writer.py",
    "lakeload/runtime/config_report.py",
    "lakeload/destinations/impl/filesystem/configuration.py",
    "lakeload/destinations/registry.py",
    "lakeload/runtime/lock.py",
    "lakeload/runtime/pipeline_settings.py",
    "lakeload/storage/working.py",
    "lakeload/sources/listing.py",
    "lakeload/spark/connect_session.py",
    "lakeload/spark/settings.py",
    "lakeload/spark/warm_engine.py",
    "lakeload/iceberg/catalog.py",
    "lakeload/destinations/impl/duckdb/factory.py",
    "lakeload/extract/pipe_order.py",
}


def test_every_resolver_caller_is_driven_here() -> None:
    """A new module reading configuration must be added to the drive below (and its keys declared)."""
    callers = {
        str(path.relative_to(ROOT)) for path in (ROOT / "lakeload").rglob("*.py")
        if path.name != "resolver.py" and _calls_resolver(path)
    }
    assert callers == RESOLVER_CALLERS


def _calls_resolver(path: Path) -> bool:
    """A call of `resolve(...)`, `resolve_section(...)` or `read_toml_values(...)` (not `Path.resolve()`)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("resolve", "resolve_section", "read_toml_values"):
                return True
            if isinstance(func, ast.Attribute) and func.attr == "resolve_section":
                return True
    return False


def drive_every_resolver_caller(pipelines_dir: Path, bucket: Path) -> None:
    from lakeload.destinations.impl.filesystem.configuration import resolve_configuration
    from lakeload.extract.pipe_order import max_parallel_items, next_item_mode
    from lakeload.iceberg.catalog import resolve_catalog_settings
    from lakeload.runtime.config_report import show_configuration
    from lakeload.runtime.lock import LockPolicy
    from lakeload.sources.listing import resolve_source
    from lakeload.spark.connect_session import resolve_engine
    from lakeload.spark.settings import resolve_spark_settings
    from lakeload.spark.warm_engine import resolve_warm
    from lakeload.storage.working import pipeline_storage, working_store

    resolve_configuration({"bucket_url": str(bucket)}, "filesystem", "p")
    with pytest.raises(ConfigurationError, match="has no type"):
        lakeload.destination("unnamed_kind")
    pipeline_storage(str(pipelines_dir), "p")
    working_store("s3://bucket/work", "p")
    resolve_source(str(bucket), pipeline_name="p")
    resolve_spark_settings("p")
    resolve_engine("p")
    resolve_warm("p")
    resolve_catalog_settings("p")
    lakeload.destinations.duckdb().database_path("p")
    lakeload.destinations.duckdb().replace_strategy("p")
    lakeload.destinations.duckdb().truncate_staging_dataset("p")
    lakeload.destinations.duckdb().schema_names("d", "snake_case", "p")
    LockPolicy.resolve("p")
    next_item_mode(None, "p")
    max_parallel_items("p")
    show_configuration("p")
    show_configuration("p", "production_bucket")
    pipe = lakeload.pipeline("p", destination=lakeload.destinations.filesystem(str(bucket)), pipelines_dir=str(pipelines_dir))
    assert pipe._settings.naming.name == "snake_case"
    pipe._settings.compressed()
    pipe._settings.file_max_bytes()
    pipe._settings.normalize_file_limits()
    pipe._settings.extract_writer("crm", "crm")  # dlt's [sources.<section>.<source>.data_writer] and shorter
    pipe._settings.configuration()
    pipe._settings.source_options_for(str(bucket))

    @lakeload.source
    def injected(page_size: int = 10) -> object:  # source arguments: user-defined keys under sources.*.*
        return lakeload.resource([{"page_size": page_size}], name="rows")

    injected()


def test_every_lookup_is_declared_and_every_declared_key_looked_up(pipelines_dir: Path, bucket: Path) -> None:
    known_keys.unregistered_lookups(clear=True)
    drive_every_resolver_caller(pipelines_dir, bucket)
    assert known_keys.unregistered_lookups() == set()
    looked_up = known_keys.looked_up()
    for sections in (("destination", "filesystem"), ("spark",), ("sources", "filesystem"), ("extract",),
                     ("normalize", "data_writer"), ("data_writer",), ("pipeline",), ("load",), ("schema",)):
        spec = spec_at(sections)
        assert spec is not None
        declared = spec.keys | set(spec.nested)
        assert declared <= {key for where, key in looked_up if spec_at(where) is spec}, sections


def test_undeclared_lookup_is_recorded() -> None:
    from lakeload.config.resolver import resolve

    resolve(("destination", "filesystem"), "no_such_setting")
    assert known_keys.unregistered_lookups(clear=True) == {(("destination", "filesystem"), "no_such_setting")}


def _dlt_fields(spec: type) -> set[str]:
    return {name for name in spec.get_resolvable_fields() if not name.startswith("_")}  # type: ignore[attr-defined]


def test_filesystem_keys_cover_dlts_exactly() -> None:
    from dlt.destinations.impl.filesystem.configuration import FilesystemDestinationClientConfiguration

    dlt_keys = _dlt_fields(FilesystemDestinationClientConfiguration)
    assert dlt_keys <= FILESYSTEM_KEYS | DLT_FILESYSTEM_KEYS, dlt_keys - FILESYSTEM_KEYS - DLT_FILESYSTEM_KEYS
    assert dlt_keys >= DLT_FILESYSTEM_KEYS  # nothing tolerated as "dlt's" that dlt does not read


def test_credential_fields_cover_dlts() -> None:
    from dlt.common.configuration.specs import (
        AwsCredentials,
        AzureCredentials,
        AzureServicePrincipalCredentials,
        GcpOAuthCredentials,
        GcpServiceAccountCredentials,
        SFTPCredentials,
    )
    from dlt.common.configuration.specs.hf_credentials import HfCredentials

    dlt_keys: set[str] = set()
    for spec in (AwsCredentials, AzureCredentials, AzureServicePrincipalCredentials, GcpOAuthCredentials,
                 GcpServiceAccountCredentials, SFTPCredentials, HfCredentials):
        dlt_keys |= _dlt_fields(spec)
    assert dlt_keys <= credential_fields() | DLT_CREDENTIAL_KEYS, dlt_keys - credential_fields() - DLT_CREDENTIAL_KEYS
    assert dlt_keys >= DLT_CREDENTIAL_KEYS
    assert "aws_access_key_id" in credential_fields() and "sftp_password" in credential_fields()


def test_data_writer_keys_are_dlts() -> None:
    from dlt.common.data_writers.buffered import BufferedDataWriter

    dlt_keys = _dlt_fields(BufferedDataWriter.BufferedDataWriterConfiguration)
    assert DLT_DATA_WRITER_KEYS | {"disable_compression"} == dlt_keys
