"""The order of items, side by side with dlt 1.31: `list(resource)`, `list(source)` and the rows a table receives,
for a resource feeding a transformer that yields several items per page (piped, `|` chains, `data_from=`), and
for sources of several resources, in dlt's `round_robin` (the default) and `fifo` `[extract] next_item_mode`.

Deferred calls (`@defer`) are left out: dlt hands their items out as they complete (an order of timing).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dlt
import pytest

import lakeload

MODES = ["round_robin", "fifo"]


def _graph(lib: Any) -> dict[str, Any]:
    @lib.resource
    def pages() -> Any:
        for page in range(3):
            yield [{"page": page, "i": i} for i in range(2)]

    @lib.transformer
    def details(page: list[dict[str, Any]]) -> Any:
        for row in page:
            yield {"detail": row["page"] * 10 + row["i"]}
            yield {"detail": row["page"] * 10 + row["i"] + 100}

    @lib.transformer
    def more(item: dict[str, Any]) -> Any:
        yield {"more": item["detail"]}
        yield {"more": -item["detail"]}

    @lib.transformer(data_from=pages)
    def fed(page: list[dict[str, Any]]) -> Any:
        for row in page:
            yield {"fed": row["i"]}
            yield {"fed": row["i"] + 10}

    letters = lib.resource(["a", "b", "c", "d"], name="letters")
    numbers = lib.resource([1, 2, 3], name="numbers")
    return {"pages": pages, "details": details, "more": more, "fed": fed, "letters": letters, "numbers": numbers}


SCENARIOS: dict[str, Callable[[Any], Any]] = {
    "resource_into_transformer": lambda lib: _graph(lib)["pages"] | _graph(lib)["details"],
    "chain": lambda lib: (lambda g: g["pages"] | g["details"] | g["more"])(_graph(lib)),
    "data_from": lambda lib: _graph(lib)["fed"],
    "two_resources": lambda lib: lib.source(lambda: [(g := _graph(lib))["letters"], g["numbers"]], name="two")(),
    "parent_and_transformers": lambda lib: lib.source(
        lambda: [(g := _graph(lib))["pages"], g["pages"] | g["details"], g["fed"], g["letters"]], name="shop")(),
    "transformer_and_resource": lambda lib: lib.source(
        lambda: [(g := _graph(lib))["pages"] | g["details"], g["numbers"]], name="mixed")(),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_list_order_as_dlt(scenario: str, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`list(resource)` and `list(source)` give dlt's items in dlt's order."""
    monkeypatch.setenv("EXTRACT__NEXT_ITEM_MODE", mode)
    theirs = list(SCENARIOS[scenario](dlt))
    ours = list(SCENARIOS[scenario](lakeload))
    assert ours == theirs


def _table_rows(bucket: Path, table: str) -> list[Any]:
    """The rows of `table` in the order its files hold them (files by name; gzip or not)."""
    rows = []
    for path in sorted((bucket / "ds" / table).rglob("*.jsonl*")):
        data = path.read_bytes()
        text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        rows += [{k: v for k, v in json.loads(line).items() if not k.startswith("_dlt")} for line in text.splitlines()]
    return rows


def _one_table(lib: Any) -> Any:
    g = _graph(lib)

    @lib.source(name="one_table")
    def one_table() -> Any:
        return [g["pages"] | g["details"], g["fed"], g["numbers"]]

    return one_table()


@pytest.mark.usefixtures("spark")
@pytest.mark.parametrize("mode", MODES)
def test_rows_reach_the_table_in_dlts_order(mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two transformers and a resource writing one table: its file holds dlt's rows in dlt's order."""
    monkeypatch.setenv("EXTRACT__NEXT_ITEM_MODE", mode)
    found = {}
    for lib in (dlt, lakeload):
        source = _one_table(lib)
        for res in source.resources.values():
            res.apply_hints(table_name="events")
        bucket = tmp_path / lib.__name__ / "bucket"
        p = lib.pipeline(f"order_{mode}", destination=lib.destinations.filesystem(str(bucket)), dataset_name="ds",
                         pipelines_dir=str(tmp_path / lib.__name__ / "pipelines"))
        p.run(source, loader_file_format="jsonl")
        found[lib.__name__] = _table_rows(bucket, "events")
    assert len(found["dlt"]) == 27
    assert found["lakeload"] == found["dlt"]
