#!/usr/bin/env python
"""Microseconds per record of lakeload's typed JSON (`lakeload.schema.typed_json`): `dumps_tracked` and `loads`.

The extract step dumps every record of a resource with `dumps_tracked` and normalize loads it back, so these two
figures bound how many records per second one core extracts. The record is a typical ~900-byte event (nested
dict, list of dicts, datetime, date, Decimal). Prints figures only: speed is measured here, not asserted by the
tests (a bound in microseconds fails on a busy shared machine; `tests/schema/test_typed_json.py` checks that the
round trip is right).

Examples::

    python bench/bench_typed_json.py
    python bench/bench_typed_json.py --records 100000 --rounds 5
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import time
from decimal import Decimal
from typing import Any

from lakeload.schema import typed_json as tj


def record(i: int) -> dict[str, Any]:
    return {
        "id": i, "name": f"user_{i}", "email": f"user{i}@example.com", "active": i % 2 == 0, "score": i * 1.5,
        "created_at": datetime.datetime(2024, 5, 1, 10, i % 60, tzinfo=datetime.timezone.utc),
        "birthday": datetime.date(1990, 1, 1 + i % 28), "balance": Decimal("1234.56"), "tags": ["a", "b", "c"],
        "address": {"street": "Main Street 1", "city": "Berlin", "zip": "10115", "geo": {"lat": 52.52, "lng": 13.405}},
        "notes": "x" * 300, "items": [{"sku": f"SKU{j}", "qty": j, "price": 9.99} for j in range(4)],
    }  # fmt: skip


def one_round(records: list[dict[str, Any]]) -> tuple[float, float]:
    """(dumps, loads) in microseconds per record."""
    start = time.perf_counter()
    lines = [tj.dumps_tracked(r) for r in records]
    dump_us = (time.perf_counter() - start) / len(records) * 1e6
    start = time.perf_counter()
    for line, tagged in lines:
        tj.loads(line, tagged)
    return dump_us, (time.perf_counter() - start) / len(records) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    records = [record(i) for i in range(args.records)]
    print(f"record: {len(tj.dumps(records[0]))} bytes of JSON, {args.records} records, {args.rounds} rounds")
    rounds = [one_round(records) for _ in range(args.rounds)]
    for i, (dump_us, load_us) in enumerate(rounds, 1):
        print(f"round {i}: dumps {dump_us:.1f} us/record, loads {load_us:.1f} us/record")
    print(f"median: dumps {statistics.median(r[0] for r in rounds):.1f} us/record, "
          f"loads {statistics.median(r[1] for r in rounds):.1f} us/record")


if __name__ == "__main__":
    main()
