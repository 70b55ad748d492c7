"""Table hints a resource gives the tables it fills, with dlt's names and checks.

>>> TableHints(write_disposition="merge", primary_key="id").primary_key
['id']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lakeload.errors import ExtractError

WRITE_DISPOSITIONS = ("append", "replace", "merge", "skip")
DELTA_MERGE_STRATEGIES = ("upsert", "insert-only")
TableNameHint = str | Callable[[Any], str] | None


@dataclass
class TableHints:
    """Hints a resource gives the table it fills (dlt's names)."""

    table_name: TableNameHint = None
    write_disposition: str = "append"
    primary_key: Sequence[str] | None = None
    merge_key: Sequence[str] | None = None
    columns: dict[str, dict[str, Any]] | None = None
    table_format: str | None = None
    file_format: str | None = None
    max_table_nesting: int | None = None
    merge_strategy: str | None = None
    raw_primary_key: str | Sequence[str] | None = field(default=None, repr=False, compare=False)  # as given (hashes differ)

    def __post_init__(self) -> None:
        disposition = self.write_disposition
        if isinstance(disposition, dict):
            self.merge_strategy = disposition.get("strategy", self.merge_strategy)
            disposition = disposition.get("disposition", "append")
        if disposition not in WRITE_DISPOSITIONS:
            raise ExtractError(
                f"Unknown write_disposition {self.write_disposition!r}; use one of {', '.join(WRITE_DISPOSITIONS)}."
            )
        self.write_disposition = disposition
        if not _same_key(self.raw_primary_key, self.primary_key):
            self.raw_primary_key = self.primary_key  # incremental de-duplication hashes "id" and ["id"] differently
        if isinstance(self.primary_key, str):
            self.primary_key = [self.primary_key]
        if isinstance(self.merge_key, str):
            self.merge_key = [self.merge_key]
        if isinstance(self.columns, Sequence) and not isinstance(self.columns, (str, dict)):
            self.columns = {c["name"]: c for c in self.columns}
        self._check_table_format()

    def _check_table_format(self) -> None:
        if self.table_format not in (None, "delta"):
            raise ExtractError(f"Unknown table_format {self.table_format!r}; the filesystem destination supports 'delta'.")
        if self.write_disposition != "merge" or self.table_format != "delta":
            return
        strategy = self.merge_strategy or "upsert"
        if strategy not in DELTA_MERGE_STRATEGIES:
            raise ExtractError(
                f"'{strategy}' merge strategy is not supported for Delta tables. "
                f"Available strategies: {list(DELTA_MERGE_STRATEGIES)}."
            )


def _same_key(raw: Any, key: Any) -> bool:
    as_list = [raw] if isinstance(raw, str) else list(raw) if raw is not None else None
    return as_list == ([key] if isinstance(key, str) else list(key) if key is not None else None)
