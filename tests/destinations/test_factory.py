"""Destination factories: shorthand, explicit, named; capabilities printable and overridable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import lakeload
from lakeload.destinations import Destination, DestinationCapabilities
from lakeload.destinations.impl.filesystem.configuration import normalize_bucket_url
from lakeload.destinations.registry import resolve_destination
from lakeload.errors import ConfigurationError


def test_capabilities_and_overrides() -> None:
    caps = lakeload.destinations.filesystem("/tmp/x", recommended_file_size=1000).capabilities()
    assert dict(caps)["preferred_loader_file_format"] == "jsonl" and caps.recommended_file_size == 1000
    with pytest.raises(ConfigurationError, match="Unknown filesystem destination arguments"):
        lakeload.destinations.filesystem("/tmp/x", not_a_capability=1)


def test_named_destinations(monkeypatch: pytest.MonkeyPatch) -> None:
    dest = lakeload.destination("prod_bucket", destination_type="filesystem", bucket_url="/tmp/prod")
    assert dest.name == "prod_bucket" and dest.configuration().bucket_url == "file:///tmp/prod"
    monkeypatch.setenv("DESTINATION__STAGING__DESTINATION_TYPE", "filesystem")
    monkeypatch.setenv("DESTINATION__STAGING__BUCKET_URL", "/tmp/staging")
    staging = resolve_destination("staging")
    assert staging is not None and staging.configuration("p").bucket_url == "file:///tmp/staging"
    with pytest.raises(ConfigurationError, match="destination_type"):
        resolve_destination("nowhere")


class OwnDestination(Destination):
    """A destination class of one's own that names no type."""

    @property
    def name(self) -> str:
        return "own"

    def capabilities(self) -> DestinationCapabilities:
        return DestinationCapabilities()


class NamedTypeDestination(OwnDestination):
    destination_type = "sqlite"  # a class attribute overrides dlt's module path


def test_destination_type_and_type_name() -> None:
    """`destination_type` is dlt's (its module path for a class of one's own); `type_name` the short name lakeload's
    records, JOB_CLIENTS and SQL clients use."""
    fs, db = lakeload.destinations.filesystem("/tmp/x"), lakeload.destinations.duckdb()
    assert (fs.destination_type, fs.type_name) == ("dlt.destinations.filesystem", "filesystem")
    assert (db.destination_type, db.type_name) == ("dlt.destinations.duckdb", "duckdb")
    assert lakeload.destination(lambda items, table: None).type_name == "sink"
    assert OwnDestination().destination_type == f"{__name__}.OwnDestination"
    assert OwnDestination().type_name == "OwnDestination"
    assert (NamedTypeDestination().destination_type, NamedTypeDestination().type_name) == ("sqlite", "sqlite")


def test_local_bucket_urls() -> None:
    assert normalize_bucket_url("/data/b") == "file:///data/b"
    assert normalize_bucket_url("rel/b") == "file://" + os.path.abspath("rel/b")
    assert normalize_bucket_url("file:///data/b") == "file:///data/b"
    assert normalize_bucket_url("file://localhost/data/b") == "file:///data/b"
    assert normalize_bucket_url("s3://bucket/path") == "s3://bucket/path"
    with pytest.raises(ConfigurationError, match="neither a path nor a host"):
        normalize_bucket_url("file://")
    assert Path(normalize_bucket_url("~/b")[7:]).is_absolute()


def test_destination_name_is_the_given_name_else_the_types_as_in_dlt(tmp_path: Path) -> None:
    import dlt

    from lakeload.runtime.state import staged_state

    for ours, theirs in ((lakeload.destinations.filesystem(str(tmp_path)), dlt.destinations.filesystem(str(tmp_path))),
                         (lakeload.destinations.duckdb(), dlt.destinations.duckdb()),
                         (lakeload.destinations.filesystem(str(tmp_path), destination_name="prod"),
                          dlt.destinations.filesystem(str(tmp_path), destination_name="prod"))):
        assert ours.destination_name == theirs.destination_name
    # the state keeps the name given, None for a destination named after its type (as dlt's state does)
    assert staged_state({}, {}, lakeload.destinations.filesystem(str(tmp_path)))["destination_name"] is None
    assert staged_state({}, {}, lakeload.destinations.duckdb(destination_name="wh"))["destination_name"] == "wh"


def test_a_destination_referenced_every_way_dlt_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    from lakeload.destinations.impl.duckdb.factory import duckdb
    from lakeload.destinations.impl.filesystem.factory import filesystem

    for reference in ("filesystem", "dlt.destinations.filesystem", "lakeload.destinations.filesystem",
                      lakeload.destinations.filesystem):
        assert type(resolve_destination(reference)) is filesystem, reference
    for reference in ("duckdb", "dlt.destinations.duckdb", lakeload.destinations.duckdb):
        assert type(resolve_destination(reference)) is duckdb, reference
    monkeypatch.setenv("DESTINATION__MY_DESTINATION__DESTINATION_TYPE", "dlt.destinations.duckdb")
    named = resolve_destination("my_destination")
    assert type(named) is duckdb and named.destination_name == "my_destination"
