"""Extract streams items to rotated typed-JSONL files of a package, in constant memory."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import lakeload
from lakeload.errors import ExtractError
from lakeload.extract.extractor import extract_resources
from lakeload.runtime.packages import EXTRACTED, PipelineStorage
from lakeload.schema import typed_json
from lakeload.schema.naming import SnakeCaseNaming


def test_rotation_types_and_manifest(tmp_path: Path) -> None:
    storage = PipelineStorage(str(tmp_path))
    items = ({"id": i, "at": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), "amount": Decimal("1.5")} for i in range(1000))
    res = lakeload.resource(items, name="My Items", primary_key="id", columns={"Amount": {"data_type": "decimal"}})
    result = extract_resources(storage, [res], "s", SnakeCaseNaming(), file_max_bytes=4000)
    package = Path(storage.package_dir(EXTRACTED, result.load_id))
    manifest = json.loads((package / "manifest.json").read_text())
    assert result.items == {"my_items": 1000} and len(manifest["splits"]) == result.files > 5
    assert all(s["may_have_tags"] and s["root_table"] == "my_items" for s in manifest["splits"])
    table = manifest["tables"]["my_items"]
    assert table["columns"]["id"] == {"name": "id", "primary_key": True, "nullable": False}
    assert table["columns"]["amount"]["data_type"] == "decimal" and table["resource"] == "My Items"
    first = (package / manifest["splits"][0]["path"]).read_bytes().splitlines()[0]
    assert typed_json.loads(first, True)["at"] == dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    assert sum(s["items"] for s in manifest["splits"]) == 1000


def test_dynamic_table_names_and_lists_as_batches(tmp_path: Path) -> None:
    storage = PipelineStorage(str(tmp_path))

    @lakeload.resource(table_name=lambda item: item["kind"])
    def things() -> Any:
        yield [{"kind": "a", "v": 1}, {"kind": "b", "v": 2}]
        yield {"kind": "a", "v": 3}

    result = extract_resources(storage, [things()], "s", SnakeCaseNaming())
    assert result.items == {"a": 2, "b": 1}


def test_unserializable_item_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    storage = PipelineStorage(str(tmp_path))
    with pytest.raises(ExtractError, match="set"):
        extract_resources(storage, [lakeload.resource([{"s": {1, 2}}], name="t")], "s", SnakeCaseNaming())
    assert storage.list_packages(EXTRACTED) == [] and storage.list_packages("extracting") == []
