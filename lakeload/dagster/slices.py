"""Which table, and which part of it, an asset output or input stands for.

A table lives at `<root_uri>/<schema>/<table>`: the table is the last part of the asset key, the schema
comes from the I/O manager's `schema` config or from the asset key prefix (never both: a
`ConfigurationError`), and is `public` when neither gives one. A partitioned asset names its partition
columns with `partition_expr` metadata (one column, or a dict of columns for multi-partitions); the
slice then holds, per column, the partition keys (static, dynamic) or the time window.

>>> TableSlice("iris", "iris_dataset").name
'iris.iris_dataset'
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakeload.errors import ConfigurationError

if TYPE_CHECKING:
    from dagster import InputContext, OutputContext

DEFAULT_SCHEMA = "public"


@dataclass(frozen=True)
class PartitionSlice:
    """The rows of one partition dimension: `column IN keys`, or `start <= column < end`."""

    column: str
    keys: tuple[str, ...] | None = None
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    fmt: str = "%Y-%m-%d %H:%M:%S"  # the partition keys' format: window bounds on a text column

    @property
    def is_window(self) -> bool:
        return self.keys is None


@dataclass(frozen=True)
class TableSlice:
    """A table and the part of it an output writes or an input reads."""

    schema: str
    table: str
    columns: tuple[str, ...] | None = None
    partitions: tuple[PartitionSlice, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.schema}.{self.table}"

    @property
    def partition_columns(self) -> list[str]:
        return [p.column for p in self.partitions]


def _schema(key_path: Sequence[str], configured: str | None) -> str:
    prefix = list(key_path[:-1])
    if configured and prefix:
        raise ConfigurationError(
            f"Asset {'/'.join(key_path)!r} gets a schema twice: {configured!r} from the I/O manager's `schema` "
            f"config and {prefix[-1]!r} from its key prefix. Give the schema one way only: drop `schema` from the "
            "I/O manager to store each asset in the schema of its key prefix, or drop the key prefix."
        )
    return configured or (prefix[-1] if prefix else DEFAULT_SCHEMA)


def _window(partitions_def: Any, start_key: str, end_key: str) -> tuple[dt.datetime, dt.datetime]:
    return (partitions_def.time_window_for_partition_key(start_key).start,
            partitions_def.time_window_for_partition_key(end_key).end)


def _dimension(column: Any, partitions_def: Any, start_key: str, end_key: str, instance: Any) -> PartitionSlice:
    from dagster import PartitionKeyRange, TimeWindowPartitionsDefinition

    if not isinstance(column, str) or not column:
        raise ConfigurationError(f"partition_expr must name a column, got {column!r}.")
    if isinstance(partitions_def, TimeWindowPartitionsDefinition):
        start, end = _window(partitions_def, start_key, end_key)
        return PartitionSlice(column, start=start, end=end, fmt=partitions_def.fmt)
    if start_key == end_key:
        return PartitionSlice(column, keys=(start_key,))
    from dagster import partition_loading_context

    with partition_loading_context(dynamic_partitions_store=instance):  # dynamic keys come from the instance
        keys = partitions_def.get_partition_keys_in_range(PartitionKeyRange(start_key, end_key))
    return PartitionSlice(column, keys=tuple(keys))


def _partition_expr(context: OutputContext | InputContext, output: OutputContext) -> Any:
    expr = (output.definition_metadata or {}).get("partition_expr")
    if expr is None:
        raise ConfigurationError(
            f"Asset {context.asset_key.to_user_string()!r} is partitioned but has no `partition_expr` metadata, so "
            "the I/O manager does not know which column holds the partition. Add it, e.g. "
            '@asset(metadata={"partition_expr": "species"}) (a dict per dimension for multi-partitions).'
        )
    return expr


def _instance(context: OutputContext | InputContext) -> Any:
    """The Dagster instance (the store of dynamic partitions) when the context has one."""
    try:
        return context.instance  # type: ignore[union-attr]
    except Exception:  # contexts built for tests without an instance
        return None


def _partitions(context: OutputContext | InputContext, output: OutputContext) -> tuple[PartitionSlice, ...]:
    from dagster import MultiPartitionsDefinition

    if not context.has_asset_partitions:
        return ()
    expr = _partition_expr(context, output)
    definition = context.asset_partitions_def
    key_range = context.asset_partition_key_range
    instance = _instance(context)
    if not isinstance(definition, MultiPartitionsDefinition):
        return (_dimension(expr, definition, key_range.start, key_range.end, instance),)
    if not isinstance(expr, Mapping):
        raise ConfigurationError(
            f"Asset {context.asset_key.to_user_string()!r} has multi-partitions: give partition_expr as a dict of "
            f"columns by dimension, e.g. {{{', '.join(repr(d.name) + ': ...' for d in definition.partitions_defs)}}}."
        )
    dimensions = []
    for part in definition.partitions_defs:
        if part.name not in expr:
            raise ConfigurationError(
                f"partition_expr of asset {context.asset_key.to_user_string()!r} has no column for partition "
                f"dimension {part.name!r}; it names {sorted(expr)}."
            )
        start = key_range.start.keys_by_dimension[part.name]  # type: ignore[attr-defined]
        end = key_range.end.keys_by_dimension[part.name]  # type: ignore[attr-defined]
        dimensions.append(_dimension(expr[part.name], part.partitions_def, start, end, instance))
    return tuple(dimensions)


def table_slice(context: OutputContext | InputContext, output: OutputContext, configured_schema: str | None) -> TableSlice:
    """The slice `context` (an output, or an input with its upstream `output`) stands for."""
    metadata = output.definition_metadata or {}
    if context.has_asset_key:
        path = context.asset_key.path
        schema, table = _schema(path, configured_schema), path[-1]
        partitions = _partitions(context, output)
    else:
        table = str(metadata.get("table") or output.name)
        schema, partitions = configured_schema or DEFAULT_SCHEMA, ()
    columns = (context.definition_metadata or {}).get("columns")
    if columns is not None and (not isinstance(columns, list | tuple) or not all(isinstance(c, str) for c in columns)):
        raise ConfigurationError(f"`columns` metadata must be a list of column names, got {columns!r}.")
    return TableSlice(schema, table, tuple(columns) if columns is not None else None, partitions)
