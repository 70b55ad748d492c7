"""The dlt table definitions a resource's hints make: its own table and the nested tables it gives hints for.

>>> from lakeload.schema.naming import get_naming
>>> table_schema_from_hints("users", "users", TableHints(primary_key="id"), get_naming("snake_case"))["columns"]
{'id': {'name': 'id', 'primary_key': True, 'nullable': False}}
"""

from __future__ import annotations

from typing import Any, cast

from lakeload.destinations.impl.filesystem.table_format import TableFormatCapabilities, table_format_of_hint
from lakeload.errors import ExtractError
from lakeload.extract.hints import TableHints, columns_dict
from lakeload.schema.naming import NamingConvention
from lakeload.schema.replace import replaces_partitions
from lakeload.schema.scd2 import SCD2, add_scd2_hints
from lakeload.schema.schema import columns_with_hint
from lakeload.schema.typing import TColumn, TTable, TTableReference
from lakeload.user_warnings import warn_user

# The merge strategies each table format implements are its capabilities (`TableFormatCapabilities`); this module
# is the one place that refuses the others. A format without merge strategies takes dlt's fallback (append).
DEFAULT_MERGE_STRATEGY = "upsert"


def table_schemas_from_hints(name: str, resource_name: str, hints: TableHints, naming: NamingConvention) -> list[TTable]:
    """The root table of `hints` and, after it, the nested tables `nested_hints` declares (parents first)."""
    tables = [table_schema_from_hints(name, resource_name, hints, naming)]
    for path, nested in sorted((hints.nested_hints or {}).items(), key=lambda kv: len(_path(kv[0]))):
        parts = _path(path)
        table_name = naming.make_path(name, *(naming.normalize_path(p) for p in parts))
        parent = naming.make_path(name, *(naming.normalize_path(p) for p in parts[:-1])) if len(parts) > 1 else name
        own_disposition = nested.get("write_disposition")
        nested_hints = TableHints(
            write_disposition=cast(str, own_disposition or hints.write_disposition), columns=columns_dict(nested.get("columns")),
            primary_key=nested.get("primary_key"), merge_key=nested.get("merge_key"),
            references=nested.get("references"), additional_table_hints=nested.get("additional_table_hints"),
        )
        table = table_schema_from_hints(table_name, resource_name, nested_hints, naming)
        del table["resource"]
        if own_disposition is None:  # a nested table takes its root's, unless it was given one (dlt's)
            del table["write_disposition"]
        elif nested_hints.write_disposition != hints.write_disposition:
            warn_user(
                f"Nested table '{table_name}' was given write_disposition '{nested_hints.write_disposition}' while its "
                f"root table '{name}' has '{hints.write_disposition}': each is loaded by its own, which may leave "
                "the nested rows inconsistent with their parents (orphans, or parents without them)."
            )
        table["parent"] = parent
        tables.append(table)
    return tables


def _path(path: str | tuple[str, ...]) -> tuple[str, ...]:
    return (path,) if isinstance(path, str) else tuple(path)


def _key_columns(table: TTable, hints: TableHints, naming: NamingConvention) -> None:
    """A direct key hint (`primary_key=`, `merge_key=`; given empty too) replaces the key its column hints set, as
    in dlt: the key's columns get the hint and, unless a column hint says otherwise, `nullable: false`. Without a
    direct key hint the column hints make the key (a compound key when several columns have it)."""
    for key_hint, keys in (("primary_key", hints.primary_key), ("merge_key", hints.merge_key)):
        if keys is None:
            continue
        for column in table["columns"].values():
            cast(dict[str, Any], column).pop(key_hint, None)
        for key in keys:
            norm = naming.normalize_path(key)
            column = table["columns"].setdefault(norm, {"name": norm})
            cast(dict[str, Any], column)[key_hint] = True
            column.setdefault("nullable", False)


def table_schema_from_hints(name: str, resource_name: str, hints: TableHints, naming: NamingConvention) -> TTable:
    """The dlt table definition a resource's hints make (columns normalized, primary key as hints)."""
    table: TTable = {"name": name, "columns": {}, "write_disposition": hints.write_disposition, "resource": resource_name}
    for col_name, column in (hints.columns or {}).items():
        norm = naming.normalize_path(col_name)
        table["columns"][norm] = cast(TColumn, {**column, "name": norm})
    _key_columns(table, hints, naming)
    if hints.table_format:
        table["table_format"] = hints.table_format
    if hints.write_disposition == "merge" and hints.merge_strategy:
        table["x-merge-strategy"] = hints.merge_strategy
        if hints.merge_strategy == SCD2:  # validity and row version columns, as dlt's hints make them
            add_scd2_hints(cast(dict[str, Any], table), hints.merge_options or {})
        _merge_condition_hints(cast(dict[str, Any], table), hints.merge_options or {}, hints.merge_strategy)
    keyed = any(c.get("primary_key") or c.get("merge_key") for c in table["columns"].values())
    if hints.write_disposition == "merge" and hints.table_format and not keyed and merge_supported(table) \
            and _capabilities(table).merge_needs_key and hints.merge_strategy != SCD2:  # scd2 matches row hashes
        raise ExtractError(
            f"Table '{name}': a {hints.table_format.capitalize()} merge needs a key. Give the resource a `primary_key` (rows are upserted "
            "by it) or a `merge_key` (stored rows with the same merge key are replaced)."
        )
    if hints.write_disposition == "replace" and hints.replace_strategy:
        cast(dict[str, Any], table)["x-replace-strategy"] = hints.replace_strategy
    if hints.file_format:
        table["file_format"] = hints.file_format
    if hints.max_table_nesting is not None:
        table["x-normalizer"] = {"max_nesting": hints.max_table_nesting}
    if hints.table_contract:
        table["schema_contract"] = hints.table_contract
    if hints.references:
        table["references"] = [cast(TTableReference, dict(r)) for r in hints.references]
    cast(dict[str, Any], table).update(hints.additional_table_hints or {})  # any of dlt's table hints
    return table


def _capabilities(table: TTable) -> TableFormatCapabilities:
    return table_format_of_hint(table.get("table_format")).capabilities


def merge_supported(table: TTable) -> bool:
    """Whether the table format of `table` (a root table schema) implements its merge strategy, or appends every
    merge (a format without merge strategies: dlt's fallback)."""
    capabilities = _capabilities(table)
    strategy = table.get("x-merge-strategy") or DEFAULT_MERGE_STRATEGY
    return not capabilities.merge_strategies or capabilities.supports_merge(strategy)


def check_merge_strategy(table: TTable, destination_strategies: tuple[str, ...] | None = None) -> None:
    """Refuse a merge strategy the table's format does not implement.

    Extract calls it when the table gets its first item, as dlt refuses it: defining the resource (or
    `apply_hints`) succeeds, a resource that yields nothing is not refused, and `run()` fails at its extract step
    (`ExtractStepFailed`), which is what a `try`/`except` around `run()` catches.
    """
    capabilities = _capabilities(table)
    partitioned = [name for name, column in table.get("columns", {}).items() if column.get("partition")]
    if partitioned and not capabilities.partitions:
        raise ExtractError(
            f"Table '{table['name']}': table_format='{table.get('table_format')}' tables cannot be partitioned by lakeload "
            f"yet (partition columns {partitioned}). Remove the `partition` hints, or load the table as Delta "
            "(table_format='delta')."
        )
    if replaces_partitions(table):
        _check_partition_replace(table)
    if table.get("write_disposition") != "merge":
        return
    strategy = table.get("x-merge-strategy") or DEFAULT_MERGE_STRATEGY
    if destination_strategies is not None and not table.get("table_format") and strategy not in destination_strategies:
        raise ExtractError(
            f"Table '{table['name']}': the '{strategy}' merge strategy is not supported by this destination; supported "
            f"strategies: {', '.join(repr(s) for s in destination_strategies)}. Give the resource one of them, or load "
            "it as a Delta or Iceberg table of the filesystem destination, which has every strategy."
        )
    if merge_supported(table):
        return
    table_format = table["table_format"]
    supported = _capabilities(table).merge_strategies
    raise ExtractError(
        f"Table '{table['name']}': the '{table.get('x-merge-strategy')}' merge strategy is not supported for "
        f"table_format='{table_format}' tables; supported strategies: {', '.join(repr(s) for s in supported)}. "
        f"Give the resource one of them, e.g. write_disposition={{'disposition': 'merge', 'strategy': '{supported[0]}'}}."
    )


def _check_partition_replace(table: TTable) -> None:
    """A replace of the loaded partitions needs a partitioned Delta or Iceberg table."""
    fix = ("Partition the table (`partition` column hints, or `iceberg_adapter`'s partitions), or use "
           "write_disposition='replace' to overwrite the whole table.")
    if table.get("table_format") not in ("delta", "iceberg"):
        raise ExtractError(f"Table '{table['name']}': the 'partitions' replace strategy needs table_format='delta' or 'iceberg'. {fix}")
    hinted = cast(dict[str, Any], table).get("x-iceberg-partition") or []
    if not hinted and not columns_with_hint(table, "partition"):
        raise ExtractError(f"Table '{table['name']}': the 'partitions' replace strategy needs partition columns. {fix}")


def _merge_condition_hints(table: dict[str, Any], options: dict[str, Any], strategy: str) -> None:
    """dlt's table hints of the merge options: `destination_scope` (the stored rows cdc may delete; `{table}` is the
    stored table), `source_filter` (the loaded rows merged; `{staging_table}` is the loaded one),
    `skip_unchanged_rows` with its row version column (upsert, cdc)."""
    if options.get("destination_scope"):
        table["x-merge-destination-scope"] = str(options["destination_scope"])
    if options.get("source_filter"):
        table["x-merge-source-filter"] = str(options["source_filter"])
    if options.get("skip_unchanged_rows") and strategy != SCD2:
        table["x-merge-skip-unchanged-rows"] = True
        version = options.get("row_version_column_name")
        if version:  # only this column tells a changed record (else every column but the keys)
            columns = table["columns"]
            columns[version] = {**columns.get(version, {}), "name": version, "nullable": False, "x-row-version": True}

