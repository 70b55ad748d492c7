"""Writes the sample files the course notebooks download (run once; the files are kept in this folder).

The notebooks fetch them from the web, which the suite cannot reach; ``cases.toml`` serves these instead
(``downloads``) or puts them in a case's folder (``files``):

* ``userdata.parquet``: the shape of TimeStored's https://www.timestored.com/data/sample/userdata.parquet (the
  Kylo sample): 300 made-up rows with its 13 columns and types: ``registration_dttm`` an INT96 timestamp as Hive
  writes it, ``id`` int32, ``salary`` double, the others strings (``birthdate`` as ``m/d/yyyy``, some empty).
* ``users.json``: the shape of https://jsonplaceholder.typicode.com/users: a JSON array of 10 users with nested
  ``address`` (and ``geo``) and ``company`` objects, made-up values.

    python tests/compat/dlt_docs/data/make_data.py
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
FIRST = ["Amanda", "Albert", "Evelyn", "Denise", "Carlos", "Kathryn", "Samuel", "Harry", "Jose", "Emily", "Susan", "Alice"]
LAST = ["Jordan", "Freeman", "Morgan", "Riley", "Mills", "White", "Holmes", "Howell", "Foster", "Stewart", "Perez"]
COUNTRIES = ["Indonesia", "Canada", "Russia", "China", "Brazil", "Sweden", "Portugal", "France", "Philippines", "Peru"]
TITLES = ["Internal Auditor", "Accountant IV", "Structural Engineer", "Senior Cost Accountant", "Account Executive", ""]
COMMENTS = ["1E+02", "", "", "\u00e5\u00df\u2202\u0192\u00a9\u02d9\u2206\u02da\u00ac\u2026\u00e6", "-1", "<script>alert('hi')</script>"]


def userdata(rows: int = 300, seed: int = 3) -> pa.Table:
    rng = random.Random(seed)
    start = datetime(2016, 2, 3, 0, 0, 0)
    columns: dict[str, list[object]] = {name: [] for name in (
        "registration_dttm", "id", "first_name", "last_name", "email", "gender", "ip_address", "cc", "country",
        "birthdate", "salary", "title", "comments")}
    for i in range(1, rows + 1):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        columns["registration_dttm"].append(start + timedelta(seconds=rng.randrange(0, 86_400)))
        columns["id"].append(i)
        columns["first_name"].append(first)
        columns["last_name"].append(last)
        columns["email"].append(f"{first[0].lower()}{last.lower()}{i}@example.com")
        columns["gender"].append(rng.choice(["Female", "Male", "Female", "Male", ""]))
        columns["ip_address"].append(".".join(str(rng.randrange(1, 255)) for _ in range(4)))
        columns["cc"].append(rng.choice(["", str(rng.randrange(10**15, 10**16))]))
        columns["country"].append(rng.choice(COUNTRIES))
        columns["birthdate"].append(rng.choice(["", f"{rng.randrange(1, 13)}/{rng.randrange(1, 29)}/{rng.randrange(1955, 2001)}"]))
        columns["salary"].append(rng.choice([None, round(rng.uniform(12_000, 290_000), 2)]))
        columns["title"].append(rng.choice(TITLES))
        columns["comments"].append(rng.choice(COMMENTS))
    schema = pa.schema([
        ("registration_dttm", pa.timestamp("ns")), ("id", pa.int32()), ("first_name", pa.string()),
        ("last_name", pa.string()), ("email", pa.string()), ("gender", pa.string()), ("ip_address", pa.string()),
        ("cc", pa.string()), ("country", pa.string()), ("birthdate", pa.string()), ("salary", pa.float64()),
        ("title", pa.string()), ("comments", pa.string()),
    ])
    return pa.Table.from_pydict(columns, schema=schema)


def users() -> list[dict[str, object]]:
    rng = random.Random(10)
    found = []
    for i in range(1, 11):
        first, last = FIRST[i % len(FIRST)], LAST[i % len(LAST)]
        found.append({
            "id": i,
            "name": f"{first} {last}",
            "username": f"{first}.{last}{i}",
            "email": f"{first.lower()}@{last.lower()}.example",
            "address": {
                "street": f"{last} Street", "suite": f"Apt. {rng.randrange(100, 999)}", "city": f"{first}ville",
                "zipcode": f"{rng.randrange(10000, 99999)}-{rng.randrange(1000, 9999)}",
                "geo": {"lat": f"{rng.uniform(-90, 90):.4f}", "lng": f"{rng.uniform(-180, 180):.4f}"},
            },
            "phone": f"1-770-736-{rng.randrange(1000, 9999)}",
            "website": f"{last.lower()}.example",
            "company": {"name": f"{last}-{first}", "catchPhrase": "Multi-layered client-server neural-net",
                        "bs": "harness real-time e-markets"},
        })
    return found


if __name__ == "__main__":
    pq.write_table(userdata(), HERE / "userdata.parquet", use_deprecated_int96_timestamps=True)
    (HERE / "users.json").write_text(json.dumps(users(), indent=2) + "\n", encoding="utf-8")
