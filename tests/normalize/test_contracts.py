"""Schema contracts in lakeload only: Spark DataFrame items, the bucket left untouched by a frozen violation,
the way out of a failed package, pydantic column mapping against dlt's, and bad contracts."""

from __future__ import annotations

import datetime
import enum
import glob
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any, Optional

import pydantic
import pytest

import lakeload
from lakeload.errors import DataValidationError, SchemaError
from lakeload.extract.validation import columns_from_model
from tests.compat._harness_contracts import bucket_rows

pytestmark = pytest.mark.usefixtures("spark")


def _pipeline(tmp_path: Path, spark: Any = None) -> Any:
    return lakeload.pipeline("contracts", destination=lakeload.destinations.filesystem(str(tmp_path / "bucket")),
                             dataset_name="ds", pipelines_dir=str(tmp_path / "pipelines"), spark=spark)


def _bucket_files(tmp_path: Path) -> list[str]:
    return sorted(glob.glob(str(tmp_path / "bucket" / "**" / "*"), recursive=True))


def test_a_frozen_violation_writes_nothing_and_the_package_can_be_dropped(tmp_path: Path) -> None:
    p = _pipeline(tmp_path)
    p.run([{"id": 1, "kids": [{"a": 1}]}], table_name="items", loader_file_format="parquet")
    before = _bucket_files(tmp_path)
    frozen = lakeload.resource([{"id": 2, "kids": [{"a": 2, "b": 1}]}], name="items", schema_contract="freeze")
    with pytest.raises(lakeload.PipelineStepFailed) as failed:
        p.run(frozen, loader_file_format="parquet")
    assert failed.value.step == "normalize"
    cause = failed.value.__cause__
    assert isinstance(cause, DataValidationError)
    assert (cause.table_name, cause.column_name, cause.schema_entity, cause.contract_mode) == ("items__kids", "b", "columns", "freeze")
    assert "drop_pending_packages()" in str(failed.value) and "schema_contract=" in str(failed.value)
    assert _bucket_files(tmp_path) == before  # no data file, no _dlt_loads record, no schema version
    with pytest.raises(lakeload.PipelineStepFailed):  # the pending package fails again, whatever the new run says
        p.run([{"id": 3}], table_name="items", schema_contract="evolve", loader_file_format="parquet")
    p.drop_pending_packages()
    p.run([{"id": 4, "kids": [{"a": 4, "b": 4}]}], table_name="items", schema_contract="evolve", loader_file_format="parquet")
    rows = bucket_rows(tmp_path / "bucket" / "ds")
    assert rows["items"] == ['{"id": 1}', '{"id": 4}']
    assert rows["items__kids"] == ['{"_dlt_list_idx": 0, "a": 1, "b": null}', '{"_dlt_list_idx": 0, "a": 4, "b": 4}']


def test_spark_dataframes_follow_columns_and_data_type_contracts(tmp_path: Path, spark: Any) -> None:
    p = _pipeline(tmp_path, spark)
    p.run(spark.createDataFrame([(1, 10)], "id long, v long"), table_name="frames", loader_file_format="parquet")
    second = spark.createDataFrame([(2, 20, "a"), (3, 30, None)], "id long, v long, extra string")
    p.run(second, table_name="frames", schema_contract={"columns": "discard_value"}, loader_file_format="parquet")
    p.run(second, table_name="frames", schema_contract={"columns": "discard_row"}, loader_file_format="parquet")
    with pytest.raises(lakeload.PipelineStepFailed) as failed:
        p.run(second, table_name="frames", schema_contract={"columns": "freeze"}, loader_file_format="parquet")
    assert isinstance(failed.value.__cause__, DataValidationError) and failed.value.__cause__.column_name == "extra"
    p.drop_pending_packages()
    typed = spark.createDataFrame([(4, "text")], "id long, v string")
    p.run(typed, table_name="frames", schema_contract={"data_type": "discard_value"}, loader_file_format="parquet")
    p.run(typed, table_name="frames", schema_contract={"data_type": "discard_row"}, loader_file_format="parquet")
    rows = bucket_rows(tmp_path / "bucket" / "ds")["frames"]
    assert rows == ['{"id": 1, "v": 10}', '{"id": 2, "v": 20}', '{"id": 3, "v": 30}', '{"id": 3, "v": 30}',
                    '{"id": 4, "v": null}']
    assert "extra" not in p.default_schema.tables["frames"]["columns"]


def test_spark_dataframe_nested_table_under_tables_discard_row(tmp_path: Path, spark: Any) -> None:
    p = _pipeline(tmp_path, spark)
    p.run(spark.createDataFrame([(1,)], "id long"), table_name="frames", loader_file_format="parquet")
    nested = spark.createDataFrame([(2, [1, 2])], "id long, kids array<long>")
    p.run(nested, table_name="frames", schema_contract={"tables": "discard_row"}, loader_file_format="parquet")
    assert bucket_rows(tmp_path / "bucket" / "ds") == {"frames": ['{"id": 1}', '{"id": 2}']}
    assert "frames__kids" not in p.default_schema.tables


class Kind(str, enum.Enum):
    A = "a"


class Level(enum.IntEnum):
    LOW = 1


class Inner(pydantic.BaseModel):
    x: int


class Everything(pydantic.BaseModel):
    id: int
    name: Optional[str] = None  # noqa: UP045 - dlt's own spelling of nullable fields
    score: float | None = None
    flag: bool
    ts: datetime.datetime
    day: datetime.date
    at: datetime.time
    amount: Decimal
    raw: bytes
    key: uuid.UUID
    kind: Kind
    level: Level
    tags: list[str]
    attrs: dict[str, int]
    inner: Inner
    maybe_inner: Optional[Inner] = None  # noqa: UP045
    aliased: int = pydantic.Field(alias="Aliased")
    anything: Any = None


def test_pydantic_columns_are_dlts() -> None:
    from dlt.common.libs.pydantic import pydantic_to_table_schema_columns

    assert columns_from_model(Everything) == pydantic_to_table_schema_columns(Everything)


def test_an_unknown_contract_says_what_is_allowed() -> None:
    with pytest.raises(SchemaError, match="Unknown schema_contract mode 'frozen'"):
        lakeload.resource([{"id": 1}], name="r", schema_contract="frozen")
    with pytest.raises(SchemaError, match="Unknown schema_contract entity 'rows'"):
        lakeload.resource([{"id": 1}], name="r").apply_hints(schema_contract={"rows": "freeze"})
