"""Destinations as dlt 1.31 names them, and a destination given only at `load()`, side by side with dlt.

The same user code runs on dlt and on lakeload (`compat_harness`): what it reads back (`destination_type`,
`destination_name`, the load info) is noted and compared, and the dataset the late load leaves is compared too.
"""

from __future__ import annotations

import posixpath
from typing import Any

import pytest
from compat_harness import DATASET, Ctx, assert_same, run_side_by_side

NAMED = {"DESTINATION__MY_DESTINATION__DESTINATION_TYPE": "filesystem",
         "DESTINATION__BIGQUERY__DESTINATION_TYPE": "duckdb"}


def _describe(destination: Any) -> dict[str, str]:
    return {"destination_type": destination.destination_type, "destination_name": destination.destination_name}


def s_destination_forms(ctx: Ctx) -> Any:
    """Every way dlt's docs give a destination, and what `pipeline.destination` says of it."""
    lib = ctx.lib

    class MyBucket(lib.destinations.filesystem):  # a destination class of one's own
        pass

    @lib.destination(batch_size=10)
    def my_sink(items: Any, table: Any) -> None:
        pass

    forms = {
        "shorthand": "filesystem",
        "type_string": "dlt.destinations.filesystem",
        "factory_class": lib.destinations.filesystem,
        "duckdb_class": lib.destinations.duckdb,
        "duckdb_shorthand": "duckdb",
        "instance": lib.destinations.filesystem(str(ctx.bucket), destination_name="production_az_bucket"),
        "named_explicit": lib.destination("my_destination", destination_type="filesystem"),
        "named_explicit_duckdb": lib.destination("other_db", destination_type="duckdb"),
        "named_config": lib.destination("my_destination"),
        "named_string": "my_destination",
        "named_duckdb_string": "bigquery",
        "own_class": MyBucket(str(ctx.bucket)),
        "sink": my_sink,
    }
    for label, destination in forms.items():
        p = lib.pipeline("forms", destination=destination, pipelines_dir=str(ctx.pipelines_dir))
        ctx.notes[label] = _describe(p.destination)
    return None


def test_destination_type_as_dlt_reports_it(tmp_path: Any) -> None:
    """`pipeline.destination.destination_type` is dlt's "dlt.destinations.<type>" for every form, a sink's is
    "dlt.destinations.destination" and a class of one's own is named by its module and class, as in dlt."""
    theirs, ours = run_side_by_side(s_destination_forms, tmp_path, env=NAMED)
    assert theirs.error is None and ours.error is None, (theirs.error, ours.error)
    assert theirs.notes["shorthand"]["destination_type"] == "dlt.destinations.filesystem"
    assert theirs.notes["own_class"]["destination_type"].endswith(".MyBucket")
    assert ours.notes == theirs.notes


def test_dlt_only_destination_is_an_import_error() -> None:
    """`from lakeload.destinations import postgres` (dlt has it, lakeload does not) is an ImportError naming the
    destinations lakeload has; so is the shorthand."""
    import lakeload
    from lakeload.errors import ConfigurationError, UnsupportedDestinationError

    with pytest.raises(ImportError, match="lakeload has no postgres destination") as raised:
        from lakeload.destinations import postgres  # noqa: F401
    assert isinstance(raised.value, UnsupportedDestinationError) and isinstance(raised.value, ConfigurationError)
    assert "filesystem" in str(raised.value) and "duckdb" in str(raised.value)
    for reference in ("snowflake", "dlt.destinations.bigquery"):
        with pytest.raises(UnsupportedDestinationError, match="lakeload's destinations are filesystem"):
            lakeload.pipeline("dlt_only", destination=reference)
    assert not hasattr(lakeload.destinations, "no_such_destination")


def s_late_destination(ctx: Ctx) -> Any:
    """dlt's docs `late_destination_access`: declare the filesystem destination with no bucket configured, extract
    and normalize, and give the bucket only to `load()`."""
    lib = ctx.lib
    p = lib.pipeline("late", destination="filesystem", pipelines_dir=str(ctx.pipelines_dir), dataset_name=DATASET)
    p.extract(["a", "b", "c"], table_name="letters")
    p.normalize()
    bucket_url = posixpath.join("file://", str(ctx.bucket.resolve()))
    info = p.load(destination=lib.destinations.filesystem(bucket_url=bucket_url))
    ctx.notes["load"] = {**_describe(p.destination), "loads": len(info.loads_ids),
                         "info_type": info.destination_type, "info_name": info.destination_name}
    return p


@pytest.mark.usefixtures("spark")
def test_late_destination(tmp_path: Any) -> None:
    """The files, the state and the loads land in the bucket `load()` was given, as dlt's do."""
    ours = assert_same(s_late_destination, tmp_path)
    assert ours.notes["load"]["info_type"] == "dlt.destinations.filesystem"
    assert (tmp_path / "lakeload" / "bucket" / DATASET / "letters").is_dir()
    assert any((tmp_path / "lakeload" / "bucket" / DATASET / "_dlt_pipeline_state").iterdir())
