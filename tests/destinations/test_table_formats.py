"""The filesystem destination's table formats (`lakeload.destinations.impl.filesystem.table_format`): a format
registered by a test is what a pipeline loads `table_format="<its name>"` tables through, and its capabilities
decide which merge strategies extract refuses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import lakeload
import lakeload.kernel.spark.working as wio
from lakeload.destinations.impl.filesystem.table_format import (
    TABLE_FORMATS,
    FormatLoad,
    FormatResult,
    TableFormat,
    TableFormatCapabilities,
    format_name,
    register_table_format,
    table_format,
    table_format_names,
)
from lakeload.errors import ConfigurationError, ExtractError
from lakeload.extract.hints import TableHints
from lakeload.extract.table_schema import check_merge_strategy
from lakeload.kernel.load.sink import read_rows
from lakeload.schema.schema import Schema

USERS = [{"id": i, "name": f"user {i}", "pets": [{"name": f"pet {i}"}]} for i in range(3)]


class JsonRowsFormat(TableFormat):
    """Each table of a load as one JSON file of its rows: `<table>/<load_id>.json`."""

    name = "json_rows"
    capabilities = TableFormatCapabilities(write_dispositions=("append",))

    def __init__(self) -> None:
        self.loads: list[FormatLoad] = []  # what the loader handed over, one entry per package

    def load(self, work: FormatLoad) -> FormatResult:
        self.loads.append(work)
        rows: dict[str, list[dict[str, object]]] = {}
        for file in work.files:
            rows.setdefault(file["table"], []).extend(read_rows(wio.join(work.package_dir, file["path"]), work.working))
        result = FormatResult()
        for table, table_rows in rows.items():
            path = f"{table}/{work.load_id}.json"
            work.client.write_bytes(path, json.dumps(table_rows, default=str).encode())
            result.files.append({"table": table, "path": path, "rows": len(table_rows)})
        return result


class UpsertOnlyFormat(JsonRowsFormat):
    """A format that merges by `upsert` only (its loading is never called here)."""

    name = "upsert_only"
    capabilities = TableFormatCapabilities(write_dispositions=("append", "merge"), merge_strategies=("upsert",))


@pytest.fixture
def json_rows() -> Iterator[JsonRowsFormat]:
    formats = JsonRowsFormat(), UpsertOnlyFormat()
    for registered in formats:
        register_table_format(registered)
    yield formats[0]
    for registered in formats:
        TABLE_FORMATS.pop(registered.name)


def test_the_registry_knows_plain_delta_and_iceberg_and_refuses_other_names() -> None:
    assert table_format(None).name == table_format("plain").name == "plain"
    assert table_format("delta").capabilities.supports_merge("insert-only")
    assert table_format("iceberg").capabilities.supports_merge("upsert")
    assert "plain" not in table_format_names() and {"delta", "iceberg"} <= set(table_format_names())
    with pytest.raises(ConfigurationError, match="Unknown table_format 'hudi'"):
        table_format("hudi")
    with pytest.raises(ExtractError, match="Unknown table_format 'hudi'; the filesystem destination supports 'delta', 'iceberg'"):
        TableHints(table_format="hudi")


def test_a_registered_format_is_a_known_hint_and_its_capabilities_refuse_merges(json_rows: JsonRowsFormat) -> None:
    assert TableHints(table_format="json_rows").table_format == "json_rows"
    schema = Schema("crm")
    schema.update_table({"name": "users", "table_format": "json_rows", "columns": {}})
    schema.update_table({"name": "users__pets", "parent": "users", "columns": {}})
    assert format_name(schema, "users__pets") == "json_rows"
    refused = {"name": "users", "write_disposition": "merge", "table_format": "upsert_only", "x-merge-strategy": "scd2"}
    with pytest.raises(ExtractError, match="'scd2' merge strategy is not supported for table_format='upsert_only'"):
        check_merge_strategy(refused)  # type: ignore[arg-type]
    check_merge_strategy(dict(refused, **{"x-merge-strategy": "upsert"}))  # type: ignore[arg-type]
    check_merge_strategy(dict(refused, table_format="json_rows"))  # type: ignore[arg-type]  # no merges: appended


@pytest.mark.usefixtures("spark")
def test_a_pipeline_loads_a_registered_formats_tables_through_it(json_rows: JsonRowsFormat, tmp_path: Path) -> None:
    bucket = tmp_path / "bucket"
    p = lakeload.pipeline("formats", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "pipelines"))
    info = p.run(USERS, table_name="users", table_format="json_rows")
    p.run([{"id": 1}], table_name="plain_users")  # no format: copied as files
    (work,) = json_rows.loads
    assert work.root_tables == ["users"] and {f["table"] for f in work.files} == {"users", "users__pets"}
    load_id = info.loads_ids[0]
    users = json.loads((bucket / "ds" / "users" / f"{load_id}.json").read_text())
    pets = json.loads((bucket / "ds" / "users__pets" / f"{load_id}.json").read_text())
    assert sorted(row["name"] for row in users) == ["user 0", "user 1", "user 2"] and len(pets) == 3
    assert sorted(path.name for path in (bucket / "ds" / "users").iterdir()) == [f"{load_id}.json"]  # nothing copied
    assert len(list((bucket / "ds" / "_dlt_loads").iterdir())) == 2
    assert [path.suffix for path in (bucket / "ds" / "plain_users").iterdir()] == [".gz"]


@pytest.mark.usefixtures("spark")
def test_a_refresh_drops_and_empties_a_formats_tables_through_it(
    json_rows: JsonRowsFormat, tmp_path: Path
) -> None:
    bucket = tmp_path / "bucket"
    p = lakeload.pipeline("formats", destination=lakeload.destinations.filesystem(str(bucket)), dataset_name="ds",
                          pipelines_dir=str(tmp_path / "pipelines"))
    first = p.run(USERS, table_name="users", table_format="json_rows").loads_ids[0]
    second = p.run(USERS[:1], table_name="users", table_format="json_rows", refresh="drop_resources").loads_ids[0]
    assert sorted(path.name for path in (bucket / "ds" / "users").iterdir()) == [f"{second}.json"]  # the folder went
    assert first != second and len(json.loads((bucket / "ds" / "users__pets" / f"{second}.json").read_text())) == 1
    third = p.run(USERS[1:], table_name="users", table_format="json_rows", refresh="drop_data").loads_ids[0]
    assert sorted(path.name for path in (bucket / "ds" / "users").iterdir()) == [f"{third}.json"]  # emptied, then loaded
    assert "users" in p.default_schema.tables


def test_the_filesystem_destination_offers_the_registered_formats_and_their_merge_strategies(
    json_rows: JsonRowsFormat,
) -> None:
    caps = lakeload.destinations.filesystem("/tmp/unused").capabilities()
    assert caps.supported_table_formats == ("delta", "iceberg", "json_rows", "upsert_only")
    assert caps.supported_merge_strategies == ("upsert", "delete-insert", "insert-only", "scd2", "cdc")
