"""The partition spec of an Iceberg table, from dlt's hints: `x-iceberg-partition` (what dlt's `iceberg_adapter`
writes: `[{"transform": "day", "source_column": "at", "partition_field": ..., "param_value": ...}]`) or, without
it, the `partition` column hints (identity partitions, as dlt takes them).

Executors split rows into one file per partition (`lakeload.kernel.delta.splits`) and keep the partition columns
in the files; pyiceberg derives each file's partition from them when it commits.

>>> partition_splits({"name": "ev", "columns": {"day": {"name": "day", "partition": True}}})
({'column': 'day', 'transform': 'identity', 'param': None},)
>>> partition_splits({"name": "ev", "columns": {}, "x-iceberg-partition": [{"transform": "month", "source_column": "at"}]})
({'column': 'at', 'transform': 'month', 'param': None},)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from lakeload.errors import DestinationError
from lakeload.kernel.contracts import TPartitionSplit
from lakeload.kernel.delta.splits import TRANSFORMS
from lakeload.schema.schema import columns_with_hint

if TYPE_CHECKING:
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.transforms import Transform

    from lakeload.schema.typing import TTable

PARTITION_HINT = "x-iceberg-partition"  # dlt's iceberg_adapter hint


def partition_splits(table: TTable) -> tuple[TPartitionSplit, ...]:
    """The partition fields of a table schema, in order; refused with the fix for a transform lakeload lacks."""
    hinted = cast(list[dict[str, Any]], cast(dict[str, Any], table).get(PARTITION_HINT) or [])
    if not hinted:
        return tuple({"column": c, "transform": "identity", "param": None} for c in columns_with_hint(table, "partition"))
    splits: list[TPartitionSplit] = []
    for entry in hinted:
        transform = str(entry.get("transform", "identity"))
        if transform not in TRANSFORMS:
            raise DestinationError(
                f"Iceberg table '{table['name']}': the partition transform {transform!r} of column "
                f"'{entry.get('source_column')}' is not supported by lakeload yet; it takes {', '.join(TRANSFORMS)}."
            )
        param = entry.get("param_value")
        splits.append({"column": str(entry["source_column"]), "transform": transform, "param": int(param) if param is not None else None})
    return tuple(splits)


def _transform(split: TPartitionSplit) -> Transform[Any, Any]:
    from pyiceberg import transforms

    kinds: dict[str, Any] = {"identity": transforms.IdentityTransform, "year": transforms.YearTransform,
                             "month": transforms.MonthTransform, "day": transforms.DayTransform,
                             "hour": transforms.HourTransform}
    if split["transform"] == "truncate":
        return transforms.TruncateTransform(int(split["param"] or 0))
    if split["transform"] == "bucket":
        return transforms.BucketTransform(int(split["param"] or 0))
    return cast("Transform[Any, Any]", kinds[split["transform"]]())


def add_fields(update: Any, splits: tuple[TPartitionSplit, ...], names: dict[str, str] | None = None) -> None:
    """Add the partition fields to a pyiceberg `UpdateSpec` (`names`: a field's name by column, as the adapter's
    `partition_field` gives it; else as pyiceberg names it, as dlt's)."""
    for split in splits:
        update.add_field(split["column"], _transform(split), (names or {}).get(split["column"]))


def field_names(table: TTable) -> dict[str, str]:
    """The partition field names `x-iceberg-partition` gives, by source column."""
    hinted = cast(list[dict[str, Any]], cast(dict[str, Any], table).get(PARTITION_HINT) or [])
    return {str(e["source_column"]): str(e["partition_field"]) for e in hinted if e.get("partition_field")}


def table_properties(table: TTable) -> dict[str, str]:
    """The table properties `x-iceberg-table-properties` gives (applied when the table is made, as in dlt)."""
    return {str(k): str(v) for k, v in (cast(dict[str, Any], table).get("x-iceberg-table-properties") or {}).items()}


def same_spec(spec: PartitionSpec, schema: Any, splits: tuple[TPartitionSplit, ...]) -> bool:
    """Whether a table's partition spec is the one `splits` describe (columns and transforms, in order)."""
    have = [(schema.find_column_name(f.source_id), str(f.transform)) for f in spec.fields]
    return have == [(s["column"], str(_transform(s))) for s in splits]
