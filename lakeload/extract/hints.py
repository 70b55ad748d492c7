"""Table hints a resource gives the tables it fills, with dlt's names and checks.

>>> TableHints(write_disposition="merge", primary_key="id").primary_key
['id']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from lakeload.destinations.impl.filesystem.table_format import table_format_names
from lakeload.errors import ExtractError
from lakeload.extract import validation
from lakeload.extract.hint_types import AdditionalTableHints, NestedHints, TableReference
from lakeload.schema.contract import ContractSetting, check_contract
from lakeload.schema.scd2 import SCD2_OPTIONS
from lakeload.schema.typing import TColumnSchema

WRITE_DISPOSITIONS = ("append", "replace", "merge", "skip")
# a replace's strategy: dlt's (one overwrite of the whole table on table formats), or lakeload's `partitions`
# (only the partitions the load has rows in are replaced: `lakeload.delta.merge`'s partition replace)
REPLACE_STRATEGIES = ("truncate-and-insert", "insert-from-staging", "staging-optimized", "partitions")
TableNameHint = str | Callable[[Any], str] | None


@dataclass
class TableHints:
    """Hints a resource gives the table it fills (dlt's names)."""

    table_name: TableNameHint = None
    write_disposition: str = "append"
    primary_key: Sequence[str] | None = None  # None: not given; [] given empty (no column is a key, as in dlt)
    merge_key: Sequence[str] | None = None
    columns: dict[str, TColumnSchema] | None = None
    table_format: str | None = None
    file_format: str | None = None
    max_table_nesting: int | None = None
    merge_strategy: str | None = None
    replace_strategy: str | None = None  # `x-replace-strategy` of a replace's write disposition dict
    merge_options: dict[str, Any] | None = None  # the strategy's options of a write disposition dict (scd2's, cdc's)
    references: Sequence[TableReference] | None = None  # dlt's table references, stored in the schema as given
    nested_hints: dict[str | tuple[str, ...], NestedHints] | None = None  # hints of nested tables, by path
    additional_table_hints: AdditionalTableHints | None = None  # extra keys of the table schema (e.g. `x-` keys)
    schema_contract: ContractSetting = None  # as given (see `lakeload.schema.contract`)
    model: Any = None  # the pydantic model given as `columns` (its validator runs at extract)
    raw_primary_key: str | Sequence[str] | None = field(default=None, repr=False, compare=False)  # as given (hashes differ)

    def __post_init__(self) -> None:
        if validation.is_model(self.columns):
            self.model, self.columns = self.columns, validation.columns_from_model(self.columns)
        self.schema_contract = check_contract(self.schema_contract)
        disposition = self.write_disposition
        if isinstance(disposition, dict) and disposition.get("disposition") == "replace":
            self.replace_strategy = _replace_strategy(disposition.get("strategy"))
            disposition = "replace"
        elif isinstance(disposition, dict):
            self.merge_strategy = disposition.get("strategy", self.merge_strategy)
            self.merge_options = {k: v for k, v in disposition.items() if k in MERGE_OPTIONS} or None
            _check_merge_options(self.merge_strategy, self.merge_options or {})
            disposition = disposition.get("disposition", "append")
        if disposition not in WRITE_DISPOSITIONS:
            raise ExtractError(
                f"Unknown write_disposition {self.write_disposition!r}; use one of {', '.join(WRITE_DISPOSITIONS)}."
            )
        self.write_disposition = disposition
        if not _same_key(self.raw_primary_key, self.primary_key):
            self.raw_primary_key = self.primary_key  # incremental de-duplication hashes "id" and ["id"] differently
        self.primary_key = key_list(self.primary_key)
        self.merge_key = key_list(self.merge_key)
        self.columns = columns_dict(self.columns)
        self._check_table_format()

    @property
    def table_contract(self) -> ContractSetting:
        """The contract stored on the table: the given one, else a pydantic model's default (dlt's)."""
        if self.schema_contract or self.model is None:
            return self.schema_contract
        contract = validation.model_contract(self.model, None)
        return {"tables": contract["tables"], "columns": contract["columns"], "data_type": contract["data_type"]}

    def _check_table_format(self) -> None:
        """Only an unknown format is refused here; a merge strategy the format lacks is refused at extract, as in
        dlt (see `lakeload.extract.table_schema.check_merge_strategy`), so defining the resource succeeds."""
        known = table_format_names()
        if self.table_format is not None and self.table_format not in known:
            raise ExtractError(
                f"Unknown table_format {self.table_format!r}; the filesystem destination supports "
                f"{', '.join(repr(name) for name in known)}."
            )


def key_list(key: str | Sequence[str] | None) -> list[str] | None:
    """A key hint as a list of column names; an empty one (`""`, `[]`) is `[]`: given, and naming no column.

    >>> key_list("id"), key_list(("id", "day")), key_list(""), key_list(None)
    (['id'], ['id', 'day'], [], None)
    """
    if key is None:
        return None
    if isinstance(key, str):
        return [key] if key else []
    return list(key)


def columns_dict(columns: Any) -> dict[str, TColumnSchema] | None:
    """Column hints as a dict by name (dlt takes a dict or a list of column dicts).

    >>> columns_dict([{"name": "id", "data_type": "bigint"}])
    {'id': {'name': 'id', 'data_type': 'bigint'}}
    """
    if isinstance(columns, Sequence) and not isinstance(columns, (str, dict)):
        return {c["name"]: c for c in columns}
    return columns  # type: ignore[no-any-return]


KEY_HINTS = ("primary_key", "merge_key")
EMPTY_REMOVES = ("table_name", "columns", "table_format", "file_format", "references",
                 "nested_hints", "additional_table_hints", "schema_contract")


UNSUPPORTED_HINTS = {
    "parent_table_name": "a resource that fills a nested table directly is not supported: yield the nested rows inside "
                         "their parent records (or load them into a root table of their own)",
    "create_table_variant": "per-table variants of a resource's hints are made per item: yield "
                            "lakeload.mark.with_hints(item, lakeload.mark.make_hints(...), create_table_variant=True)",
}


def _check_hint_names(given: dict[str, Any]) -> None:
    """Refuse a hint lakeload does not know with an error naming the known ones (or, for two of dlt's, what to do)."""
    known = {f.name for f in fields(TableHints)} - {"model", "raw_primary_key", "merge_strategy", "merge_options"}
    for key, value in given.items():
        if key in UNSUPPORTED_HINTS and value:
            raise ExtractError(f"apply_hints({key}=...): {UNSUPPORTED_HINTS[key]}.")
        if key not in known and key not in UNSUPPORTED_HINTS:
            raise ExtractError(f"Unknown hint {key!r}; the hints are {', '.join(sorted(known | {'incremental'}))}.")


def merged_hints(current: TableHints, given: dict[str, Any]) -> TableHints:
    """`current` with the `given` hints set, as dlt's `apply_hints`: `None` keeps a hint, an empty value (`""`,
    `[]`, `{}`) removes it; new columns merge into the existing ones.

    A key hint (`primary_key`, `merge_key`) replaces the one before it; given empty it stays given, naming no column,
    so that the table has no such key whatever its column hints say (see `table_schema._key_columns`).

    >>> merged_hints(TableHints(primary_key=["id"]), {"primary_key": ""}).primary_key
    []
    >>> merged_hints(TableHints(primary_key=["id"]), {"primary_key": ("a", "b")}).primary_key
    ['a', 'b']
    """
    _check_hint_names(given)
    merged = dict(vars(current))
    for key, value in given.items():
        if value is None or key in UNSUPPORTED_HINTS:  # an unsupported hint left empty asks for nothing
            continue
        if key == "columns":
            merged["model"] = None  # new `columns` replace a pydantic model (a model given again sets it again)
        if key in KEY_HINTS:
            merged[key] = key_list(value)
            if key == "primary_key":
                merged["raw_primary_key"] = value  # as given: an incremental hashes "id" and ["id"] differently
        elif key in EMPTY_REMOVES and not value and not callable(value):
            merged[key] = None
        elif key == "columns" and merged.get("columns") and not callable(value):
            old = merged["columns"]
            merged[key] = {**old, **{n: {**old.get(n, {}), **c} for n, c in (columns_dict(value) or {}).items()}}
        elif key == "references" and merged.get(key):  # a new reference to a table replaces the old one
            merged[key] = list({**{r["referenced_table"]: r for r in merged[key]}, **{r["referenced_table"]: r for r in value}}.values())
        elif key == "additional_table_hints" and merged.get(key):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return TableHints(**merged)


def _same_key(raw: Any, key: Any) -> bool:
    as_list = [raw] if isinstance(raw, str) else list(raw) if raw is not None else None
    return as_list == ([key] if isinstance(key, str) else list(key) if key is not None else None)


MERGE_OPTIONS = (*SCD2_OPTIONS, "destination_scope", "source_filter", "skip_unchanged_rows")
OPTION_STRATEGIES = {  # the merge strategies each option applies to, as in dlt
    "source_filter": ("delete-insert", "scd2", "upsert", "cdc"),
    "destination_scope": ("delete-insert", "scd2", "cdc"),
    "skip_unchanged_rows": ("upsert", "cdc"),
    "row_version_column_name": ("scd2", "upsert", "cdc"),
}


def _replace_strategy(strategy: Any) -> str | None:
    if strategy is not None and strategy not in REPLACE_STRATEGIES:
        raise ExtractError(
            f"Unknown replace strategy {strategy!r}; use one of {', '.join(REPLACE_STRATEGIES)} ('partitions' replaces only "
            "the partitions the load has rows in, on Delta and Iceberg tables)."
        )
    return None if strategy is None else str(strategy)


def _check_merge_options(strategy: str | None, options: dict[str, Any]) -> None:
    """Refuse an option of a merge write disposition dict that `strategy` does not have (dlt refuses it too)."""
    for option, strategies in OPTION_STRATEGIES.items():
        if options.get(option) and strategy and strategy not in strategies:
            raise ExtractError(
                f"The merge option `{option}` applies to the {', '.join(strategies)} strategies, not to "
                f"`{strategy}`. Use one of those strategies or remove `{option}` from the write disposition."
            )
    for option in ("source_filter", "destination_scope"):
        condition = options.get(option)
        if condition is not None and (not isinstance(condition, str) or not condition.strip()):
            raise ExtractError(f"The merge option `{option}` must be a SQL condition (a non-empty string), not {condition!r}.")

