"""Driver side: the key matching of a Delta merge (`lakeload.delta.merge`), as Spark joins and file pruning.

- `flag_matches` marks stored rows whose key any of several key sets holds (null-safe, one left join each);
- `may_hold_keys` tells from a data file's min/max statistics whether it can hold an incoming key (every
  key column's range must overlap: multi-column keys prune too);
- `all_have_root_ids` tells from null counts whether every nested row carries its `_dlt_root_id`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from lakeload.kernel.normalize.relational import C_DLT_ROOT_ID

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeload.delta.snapshot_files import SnapshotFile

KEY_PREFIX = "__lakeload_k_"
MATCHED = "__lakeload_matched"


def keys_of(frame: DataFrame, columns: list[str], tag: str = "", unique: bool = False) -> DataFrame:
    """The `columns` of `frame` renamed for `match`, distinct (a shuffle) unless `unique` says they already are."""
    from pyspark.sql import functions as F

    keys = frame.select(*[F.col(c).alias(f"{KEY_PREFIX}{tag}{c}") for c in columns])
    return keys if unique else keys.distinct()


def match(target: DataFrame, keys: DataFrame, columns: list[str], how: str, tag: str = "") -> DataFrame:
    """`target` joined with `keys` (made by `keys_of`) on `columns`, nulls equal (partition values may be null)."""
    from pyspark.sql import functions as F

    condition = functools.reduce(lambda a, b: a & b, [target[c].eqNullSafe(F.col(f"{KEY_PREFIX}{tag}{c}")) for c in columns])
    return target.join(keys, condition, how)


def flag_matches(stored: DataFrame, key_sets: list[tuple[DataFrame, list[str]]], unique: frozenset[int] = frozenset()) -> DataFrame:
    """`stored` with a boolean MATCHED column: whether any of the key sets holds the row's key.

    One left join per key set against its distinct keys (small: Spark broadcasts them), so the stored rows
    are read once and not multiplied; the key sets whose positions are in `unique` hold no key twice (no
    distinct pass for them).
    """
    from pyspark.sql import functions as F

    flags = []
    for i, (keys, columns) in enumerate(key_sets):
        tag = f"{i}_"
        marker = f"{KEY_PREFIX}{tag}hit"
        distinct_keys = keys_of(keys, columns, tag, unique=i in unique)
        stored = match(stored, distinct_keys.withColumn(marker, F.lit(True)), columns, "left", tag)
        stored = stored.drop(*[f"{KEY_PREFIX}{tag}{c}" for c in columns])
        flags.append(marker)
    matched = functools.reduce(lambda a, b: a | b, [F.coalesce(F.col(m), F.lit(False)) for m in flags])
    return stored.withColumn(MATCHED, matched).drop(*flags)



def byte_size(size: str) -> int:
    """A Spark byte size (`10485760`, `10MB`, `-1`) in bytes."""
    units = {"b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3, "gb": 1024**3}
    text = size.strip().lower()
    number = text.rstrip("kmgb")
    return int(number) * units.get(text[len(number):], 1) if number.lstrip("-").isdigit() else 10 * 1024**2


def all_have_root_ids(files: list[SnapshotFile], stored_columns: set[str]) -> bool:
    """Whether every row of `files` has a `_dlt_root_id` (by the files' null counts), so that the rows below a
    removed parent row are found by their root id alone."""
    if C_DLT_ROOT_ID not in stored_columns:
        return False
    return all(f["stats"].get(f"null_count.{C_DLT_ROOT_ID}") == 0 for f in files)


UNKNOWN = object()  # a file's partition value its listing does not tell


def file_partition(file: SnapshotFile, columns: list[str]) -> tuple[Any, ...]:
    """A data file's values of the partition `columns`, as `lakeload.kernel.delta.files.partition_value` writes them:
    from its partition values (Delta), else from its statistics, where a file holds one partition (Iceberg): all
    null, or its lowest value equal to its highest; `UNKNOWN` where neither tells.

    >>> file_partition({"path": "f", "size": 1, "partition_values": {}, "stats": {"num_records": 2, "min.k": 7, "max.k": 7}}, ["k"])
    ('7',)
    """
    from lakeload.kernel.delta.files import partition_value

    def value(column: str) -> Any:
        if column in file["partition_values"]:
            return file["partition_values"][column]
        stats = file["stats"]
        if f"partition.{column}" in stats:  # a transform's value (Iceberg's partition record)
            return partition_value(stats[f"partition.{column}"])
        if stats.get(f"null_count.{column}") == stats.get("num_records"):
            return None
        low = stats.get(f"min.{column}")
        return partition_value(low) if low is not None and low == stats.get(f"max.{column}") else UNKNOWN

    return tuple(value(c) for c in columns)


def may_hold_keys(stats: dict[str, Any], ranges: dict[str, tuple[Any, Any]]) -> bool:
    """Whether a data file (its flattened add-action `stats`) can hold a row whose key lies in `ranges`
    (each key column's lowest and highest incoming value): every column's range must overlap the file's.

    >>> may_hold_keys({"min.id": 1, "max.id": 9, "min.kind": "a", "max.kind": "c"}, {"id": (5, 20), "kind": ("d", "f")})
    False
    """
    return all(_may_overlap(stats, key, low, high) for key, (low, high) in ranges.items())


def _may_overlap(stats: dict[str, Any], key: str, low: Any, high: Any) -> bool:
    """Whether a file's min/max statistics of `key` can include a value in [low, high]."""
    file_min, file_max = stats.get(f"min.{key}"), stats.get(f"max.{key}")
    if file_min is None or file_max is None or low is None or high is None:
        return True
    try:
        return not (file_max < low or file_min > high)
    except TypeError:
        return True
