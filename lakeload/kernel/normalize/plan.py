"""Executor-safe: what the driver hands the normalize tasks of one package (`tasks`, `arrow`, `arrow_items`):
the package's `NormalizePlan` and its `Split`s, picklable and free of table rows.

>>> Split(0, "new_jobs/users.1.jsonl", "users").file_format
'jsonl'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lakeload.kernel.normalize.contract import ContractSettings
from lakeload.kernel.normalize.relational import NormalizerSettings
from lakeload.kernel.normalize.split_io import SourceFile
from lakeload.kernel.normalize.writers import NO_LIMITS, FileLimits
from lakeload.kernel.spark.working import WorkingStore
from lakeload.schema.naming import NamingConvention
from lakeload.schema.typing import TTable

FRAME_FORMAT = "frame"  # a split that is a Spark DataFrame written as a Parquet folder, normalized by Spark


@dataclass(frozen=True)
class Split:
    """One extracted file of a package: JSONL of typed-JSON items, Parquet, or a DataFrame's Parquet folder."""

    index: int
    path: str
    root_table: str
    file_format: str = "jsonl"  # "jsonl" | "parquet" | FRAME_FORMAT
    may_have_tags: bool = False
    source: SourceFile | None = None  # a (byte range of a) JSONL file a source registered, read in place


@dataclass
class NormalizePlan:
    """Everything executors need for one package; picklable and free of table rows."""

    load_id: str
    naming: NamingConvention
    tables: dict[str, TTable]
    detections: tuple[str, ...]
    default_hints: dict[str, list[str]]
    normalizer: NormalizerSettings
    splits: list[Split]
    file_format: str = "jsonl"
    compressed: bool = True
    output_dir: str = ""
    root_formats: dict[str, str] = field(default_factory=dict)  # root table -> format (Delta: parquet)
    working: WorkingStore | None = None  # the bucket of package data URLs (options hidden from repr)
    contracts: ContractSettings | None = None  # None: no table has a schema contract (everything evolves)
    file_limits: FileLimits = NO_LIMITS  # when a final file is full (dlt's `[normalize.data_writer]`)

    def format_for(self, root_table: str) -> str:
        """The file format of a root table's tree: the package's, or parquet for Delta tables."""
        return self.root_formats.get(root_table, self.file_format)
