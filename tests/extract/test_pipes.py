"""Resource pipes (issue 14, group 3) against dlt 1.31: the same script, the same rows."""

from __future__ import annotations

import glob
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

import lakeload

pytestmark = pytest.mark.usefixtures("spark")


def pages(lib: Any) -> Any:
    @lib.resource(name="pages")
    def generate() -> Any:
        for page in range(5):
            yield [{"id": page * 10 + i, "page": page} for i in range(4)]

    return generate()


def s_map(lib: Any) -> Any:
    return pages(lib).add_map(lambda r: {**r, "double": r["id"] * 2})


def s_filter(lib: Any) -> Any:
    return pages(lib).add_filter(lambda r: r["id"] % 3 == 0)


def s_filter_empties_pages(lib: Any) -> Any:
    return pages(lib).add_filter(lambda r: r["page"] == 2)


def s_yield_map(lib: Any) -> Any:
    def split(r: dict[str, Any]) -> Any:
        yield {"id": r["id"], "part": "a"}
        yield {"id": r["id"], "part": "b"}

    return pages(lib).add_yield_map(split)


def s_limit(lib: Any) -> Any:
    return pages(lib).add_limit(2)


def s_limit_rows(lib: Any) -> Any:
    return pages(lib).add_limit(6, count_rows=True)


def s_limit_zero(lib: Any) -> Any:
    return pages(lib).add_map(lambda r: r).add_limit(0)


def s_chain(lib: Any) -> Any:
    return pages(lib).add_filter(lambda r: r["id"] % 2 == 0).add_map(lambda r: {"even": r["id"]}).add_limit(3)


def s_pipe_function(lib: Any) -> Any:
    return pages(lib) | (lambda r: {"id": r["id"], "tag": f"t{r['id']}"})


def s_transformer(lib: Any) -> Any:
    @lib.transformer(name="details")
    def details(page: list[dict[str, Any]]) -> Any:
        for r in page:
            yield {"id": r["id"], "detail": r["id"] + 1000}

    return pages(lib) | details


def s_transformer_data_from(lib: Any) -> Any:
    parent = pages(lib)

    @lib.transformer(data_from=parent, name="sums", write_disposition="replace")
    def sums(page: list[dict[str, Any]]) -> Any:
        return {"page": page[0]["page"], "total": sum(r["id"] for r in page)}

    return sums


def s_async(lib: Any) -> Any:
    @lib.resource(name="async_rows")
    async def rows() -> Any:
        for i in range(7):
            yield {"id": i}

    return rows()


SCRIPTS: dict[str, Callable[[Any], Any]] = {
    f.__name__[2:]: f for f in (s_map, s_filter, s_filter_empties_pages, s_yield_map, s_limit, s_limit_rows,
                                s_limit_zero, s_chain, s_pipe_function, s_transformer, s_transformer_data_from, s_async)
}


def _rows(bucket: Path) -> dict[str, list[str]]:
    tables: dict[str, list[str]] = {}
    for folder in sorted(glob.glob(str(bucket / "ds" / "*"))):
        table = Path(folder).name
        files = sorted(glob.glob(f"{folder}/*.parquet"))
        if table.startswith("_dlt") or not files:
            continue
        rows = duckdb.sql(f"SELECT * EXCLUDE (_dlt_id, _dlt_load_id) FROM read_parquet({files!r})").to_arrow_table()
        tables[table] = sorted(json.dumps(r, sort_keys=True) for r in rows.to_pylist())
    return tables


def _run(lib: Any, script: Callable[[Any], Any], tmp_path: Path, tag: str) -> dict[str, list[str]]:
    p = lib.pipeline(f"pipes_{tag}", destination=lib.destinations.filesystem(str(tmp_path / tag)), dataset_name="ds",
                     pipelines_dir=str(tmp_path / f"{tag}_pipelines"))
    p.run(script(lib), loader_file_format="parquet")
    return _rows(tmp_path / tag)


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_pipes_build_the_same_tables_as_dlt(name: str, tmp_path: Path) -> None:
    import dlt

    theirs = _run(dlt, SCRIPTS[name], tmp_path, "dlt")
    ours = _run(lakeload, SCRIPTS[name], tmp_path, "lakeload")
    assert ours == theirs


def test_an_unfed_transformer_says_how_to_feed_it(tmp_path: Path) -> None:
    @lakeload.transformer
    def orphan(item: Any) -> Any:
        yield item

    p = lakeload.pipeline("pipes_orphan", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                          pipelines_dir=str(tmp_path / "p"))
    with pytest.raises(lakeload.PipelineStepFailed, match=r"pipe a resource into it"):
        p.run(orphan())


def test_limit_closes_the_generator(tmp_path: Path) -> None:
    produced: list[int] = []

    def endless() -> Any:
        n = 0
        while True:
            produced.append(n)
            yield {"n": n}
            n += 1

    res = lakeload.resource(endless(), name="endless").add_limit(5)
    p = lakeload.pipeline("pipes_endless", destination=lakeload.destinations.filesystem(str(tmp_path / "b")),
                          pipelines_dir=str(tmp_path / "p"))
    assert p.run(res).row_counts == {"endless": 5}
    assert produced == [0, 1, 2, 3, 4]
