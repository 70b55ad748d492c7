"""Fuzzed records: the Arrow fast path of normalize gives exactly what the Python path gives (no Spark)."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import pytest
from arrow_compare import run_both

from lakeload.kernel.normalize.relational import RootTableSettings
from lakeload.schema.naming import SnakeCaseNaming

_KEYS = ["id", "name", "Name", "+1", "a b", "value", "tags", "meta", "ts", "x", "camelKey", "ü", "n2"]  # Name/name, ü/x collide
_DISTINCT_KEYS = ["id", "name", "+1", "a b", "value", "tags", "meta", "ts", "x", "camelKey", "n2", "Ünïcode"]


def _scalar(rng: random.Random, kind: str) -> Any:
    if kind == "int":
        return rng.choice([0, 1, -5, 2**40, rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.5, -2.25, 3.0, 1e-7, rng.random() * 100])
    if kind == "str":
        return rng.choice(["", "a", "hello world", "null", "ünï", "2024", "12", "true", "x" * 30])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "ts":
        base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=rng.randint(0, 10**8))
        return rng.choice([base.strftime("%Y-%m-%dT%H:%M:%SZ"), base.isoformat(), base.strftime("%Y-%m-%d %H:%M:%S")])
    return None


class _Shape:
    """A random record shape: each key has a usual kind and, rarely, another one."""

    def __init__(self, rng: random.Random, depth: int = 0, keys: list[str] = _KEYS) -> None:
        self.rng = rng
        kinds = ["int", "float", "str", "bool", "ts", "dict", "list_dict", "list_scalar", "list_list"]
        if depth >= 2:
            kinds = kinds[:5]
        self.fields = {k: rng.choice(kinds) for k in rng.sample(keys, rng.randint(1, 6))}
        self.children = {k: _Shape(rng, depth + 1, keys) for k, kind in self.fields.items() if kind in ("dict", "list_dict")}
        self.item_kind = {k: rng.choice(["int", "str", "float"]) for k in self.fields}

    def record(self, flip: float) -> dict[str, Any]:
        rng = self.rng
        out: dict[str, Any] = {}
        for key, kind in self.fields.items():
            roll = rng.random()
            if roll < 0.15:
                continue  # missing
            if roll < 0.22:
                out[key] = None
                continue
            if rng.random() < flip:
                kind = rng.choice(["int", "float", "str", "bool", "ts"])
            if kind == "dict":
                out[key] = self.children[key].record(flip)
            elif kind == "list_dict":
                out[key] = [self.children[key].record(flip) for _ in range(rng.randint(0, 3))]
            elif kind == "list_scalar":
                out[key] = [_scalar(rng, self.item_kind[key]) for _ in range(rng.randint(0, 3))]
            elif kind == "list_list":
                out[key] = [[_scalar(rng, "int") for _ in range(rng.randint(0, 2))] for _ in range(rng.randint(0, 2))]
            else:
                out[key] = _scalar(rng, kind)
        return out


@pytest.mark.parametrize("seed", range(12))
def test_fuzzed_records(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    shape = _Shape(rng)
    flip = [0.0, 0.01, 0.05][seed % 3]
    records = [shape.record(flip) for _ in range(rng.choice([30, 200, 600]))]
    stored = None
    if seed % 4 == 3:  # a stored schema that disagrees with some of the data
        names = [SnakeCaseNaming().normalize_path(k) for k in list(shape.fields)[:2]]
        stored = {"events": {"name": "events", "columns": {
            n: {"name": n, "data_type": rng.choice(["text", "bigint", "double", "bool"]), "nullable": True} for n in names
        }}}
    run_both(monkeypatch, tmp_path, records, expect_fast=None, tables=stored, fmt=rng.choice(["parquet", "jsonl"]))


@pytest.mark.parametrize("seed", range(8))
def test_fuzzed_records_with_rare_type_changes_take_the_fast_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seed: int) -> None:
    rng = random.Random(1000 + seed)
    shape = _Shape(rng, keys=_DISTINCT_KEYS)
    records = [shape.record(0.002) for _ in range(500)]
    roots = {"events": RootTableSettings(propagate_root_key=True, occurrence=True)} if seed % 2 else None
    run_both(monkeypatch, tmp_path, records, expect_fast=True, roots=roots, fmt=["parquet", "jsonl", "csv"][seed % 3])
