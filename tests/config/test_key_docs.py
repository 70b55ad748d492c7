"""The key documentation (`lakeload.runtime.key_reference`, `lakeload.config.key_docs`) against the known-keys
registry and against the defaults the resolving functions apply when nothing is configured."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakeload.config.bucket_credentials import credential_classes
from lakeload.config.key_docs import CREDENTIAL_DOCS, RETRY_DOCS, KeyDoc, credential_key_docs, default_text
from lakeload.config.known_keys import RETRY_KEYS, Section, credential_fields, root, spec_at
from lakeload.runtime.key_reference import ANY_NAME, key_doc, key_docs

CREDENTIAL_SECTIONS = ("credentials", "working_credentials")


def read_keys(sections: tuple[str, ...] = (), spec: Section | None = None) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every (section path, key) lakeload reads, per `known_keys.root()`: each section's `keys` (not its `dlt_keys`),
    all sections down, a destination's name as `<name>`; the credential sections' fields are left to their classes."""
    spec = root() if spec is None else spec
    for key in sorted(spec.keys):
        yield sections, key
    for name, child in sorted(spec.nested.items()):
        if name not in CREDENTIAL_SECTIONS:
            yield from read_keys((*sections, name), child)
    if spec.any_child is not None:
        yield from read_keys((*sections, ANY_NAME), spec.any_child)


def test_every_key_lakeload_reads_is_documented() -> None:
    keys = list(read_keys())
    assert len(keys) > 60  # every section, [destination] and [destination.<name>] both
    missing = [(path, key) for path, key in keys if key_doc(path, key) is None]
    assert not missing, f"keys without a KeyDoc in lakeload/runtime/key_reference.py: {missing}"
    assert set(keys) == set(key_docs())  # and nothing else is: no KeyDoc of an unknown (or dlt's) key


def test_no_doc_of_an_unknown_key() -> None:
    for (path, key), doc in key_docs().items():
        spec = spec_at(tuple("production_bucket" if name == ANY_NAME else name for name in path))
        assert spec is not None, path
        assert key in spec.keys, (path, key)  # (dlt may read it too: [extract] file_max_bytes)
        assert isinstance(doc, KeyDoc) and doc.type and doc.doc, (path, key)
        assert "\n" not in doc.doc and doc.doc.endswith("."), (path, key)  # one line, a sentence
    assert key_doc(("spark",), "no_such_key") is None
    assert key_doc(("destination", "any_destination"), "layout") == key_doc(("destination", ANY_NAME), "layout")
    assert set(RETRY_DOCS) == set(RETRY_KEYS)


def test_every_credential_field_is_documented_from_its_class() -> None:
    docs = credential_key_docs()
    assert set(docs) == set(credential_fields()) == set(CREDENTIAL_DOCS)  # none missing, none unknown
    for cls in credential_classes():
        for field in dataclasses.fields(cls):
            default = None if field.default is dataclasses.MISSING else field.default
            assert docs[field.name].default == default_text(default), (cls.__name__, field.name)
    assert docs["sftp_port"] == KeyDoc("int", "22", CREDENTIAL_DOCS["sftp_port"])
    assert docs["aws_access_key_id"].type == "str | None"


def documented(sections: tuple[str, ...], key: str) -> str:
    doc = key_doc(sections, key)
    assert doc is not None, (sections, key)
    return doc.default


def test_spark_defaults_are_the_resolved_ones() -> None:
    from lakeload.spark.connect_session import resolve_engine
    from lakeload.spark.settings import resolve_spark_settings
    from lakeload.spark.warm_engine import resolve_warm

    warm = resolve_warm(None, {})
    assert documented(("spark",), "warm") == default_text(warm.enabled) == "true"
    assert documented(("spark",), "warm_idle_seconds") == default_text(warm.idle_seconds)
    assert documented(("spark",), "mode") == default_text(resolve_engine(None, {}).mode)
    settings = resolve_spark_settings(None, {})
    assert settings.master is None  # unset: the session lakeload starts uses DEFAULT_MASTER
    for key in ("log_file", "class_archive", "lazy_jit"):
        assert documented(("spark",), key) == default_text(getattr(settings, key)), key


def test_pipeline_defaults_are_the_resolved_ones() -> None:
    from lakeload.iceberg.catalog import resolve_catalog_settings
    from lakeload.runtime.lock import LockPolicy
    from lakeload.runtime.pipeline_settings import PipelineSettings

    policy = LockPolicy.resolve("quick_start")
    assert (documented(("pipeline",), "lock"), documented(("pipeline",), "lock_timeout")) == (
        default_text(policy.mode), default_text(policy.timeout))
    catalog = resolve_catalog_settings("quick_start")
    assert documented(("iceberg_catalog",), "iceberg_catalog_name") == default_text(catalog.name)
    assert documented(("iceberg_catalog",), "iceberg_catalog_type") == default_text(catalog.type)
    settings = PipelineSettings("quick_start", None, "data")
    assert documented(("extract",), "file_max_bytes") == default_text(settings.file_max_bytes())
    assert settings.compressed()
    for path in (("normalize", "data_writer"), ("data_writer",)):
        assert documented(path, "disable_compression") == default_text(not settings.compressed())
    assert '"snake_case"' in documented(("schema",), "naming") and settings.naming.name == "snake_case"


@pytest.mark.parametrize("sections", [("destination",), ("destination", ANY_NAME)])
def test_destination_defaults_are_the_resolved_ones(sections: tuple[str, ...], tmp_path: Path) -> None:
    from lakeload.destinations.impl.filesystem.configuration import resolve_configuration

    config = resolve_configuration({"bucket_url": str(tmp_path)}, "filesystem", None)
    values: dict[str, Any] = {
        "layout": config.layout, "max_state_files": config.max_state_files,
        "always_refresh_views": config.always_refresh_views, "kwargs": config.kwargs,
        "client_kwargs": config.client_kwargs, "deltalake_storage_options": config.deltalake_storage_options,
        "extra_placeholders": config.extra_placeholders, "credentials": config.credentials,
        **{key: getattr(config.retry, name) for key, name in RETRY_KEYS.items()},
    }
    for key, value in values.items():
        assert documented(sections, key) == default_text(value), key


def test_duckdb_defaults_are_the_applied_ones() -> None:
    from lakeload.destinations.impl.duckdb.factory import duckdb

    destination = duckdb(":memory:")
    assert documented(("destination", ANY_NAME), "replace_strategy") == default_text(destination.replace_strategy("p"))
    assert documented(("load",), "truncate_staging_dataset") == default_text(destination.truncate_staging_dataset("p"))
    layout = json.loads(documented(("destination",), "staging_dataset_name_layout"))
    as_named = duckdb(":memory:", enable_dataset_name_normalization=False).schema_names("MyData", "snake_case", "p")
    assert as_named == ("MyData", layout % "MyData")  # the default layout, the name as given
    normalized = json.loads(documented(("destination",), "enable_dataset_name_normalization"))
    assert normalized is True and destination.schema_names("MyData", "snake_case", "p")[0] == "my_data"
