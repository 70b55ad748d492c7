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
from lakeload.schema import typed_json
from lakeload.schema.naming import SnakeCaseNaming
from lakeload.storage.packages import EXTRACTED, PipelineStorage


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


def _files(storage: PipelineStorage, load_id: str) -> list[bytes]:
    package = Path(storage.package_dir(EXTRACTED, load_id))
    manifest = json.loads((package / "manifest.json").read_text())
    return [(package / split["path"]).read_bytes() for split in manifest["splits"]]


def test_pages_rotate_after_the_same_items_as_single_items(tmp_path: Path) -> None:
    """A page is written in blocks, yet its files end after the same items as when the items come one by one."""
    events = [{"id": i, "text": "x" * (i % 37), "at": dt.date(2024, 1, 1 + i % 28)} for i in range(500)]
    pages = [events[i : i + 64] for i in range(0, len(events), 64)]
    single = PipelineStorage(str(tmp_path / "single"))
    by_item = extract_resources(single, [lakeload.resource(iter(events), name="e")], "s", SnakeCaseNaming(), file_max_bytes=3000)
    paged = PipelineStorage(str(tmp_path / "paged"))
    by_page = extract_resources(paged, [lakeload.resource(iter(pages), name="e")], "s", SnakeCaseNaming(), file_max_bytes=3000)
    files = _files(paged, by_page.load_id)
    assert files == _files(single, by_item.load_id) and len(files) > 10
    assert all(len(f) >= 3000 for f in files[:-1]) and all(len(f) - len(f.splitlines()[-1]) - 1 < 3000 for f in files)
    assert [typed_json.loads(line, True) for f in files for line in f.splitlines()] == events


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
