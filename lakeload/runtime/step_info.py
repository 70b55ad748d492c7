"""What the extract and normalize steps of a run did, as dlt's `ExtractInfo` and `NormalizeInfo`
(`pipeline.last_trace.last_extract_info`, `.last_normalize_info`; the load step's is the `LoadInfo`).

Example (a run needs Spark)::

    p.run(data, table_name="users")
    p.last_trace.last_normalize_info.row_counts   # {'users': 2}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakeload.runtime.info import PackageInfo, total_row_counts


@dataclass
class StepInfo:
    """The packages one step made or worked on, oldest first."""

    pipeline_name: str
    step: str = ""
    packages: list[PackageInfo] = field(default_factory=list)

    @property
    def load_packages(self) -> list[PackageInfo]:
        """The packages (dlt's name)."""
        return self.packages

    @property
    def loads_ids(self) -> list[str]:
        """dlt's name for the ids of the packages."""
        return [p.load_id for p in self.packages]

    @property
    def row_counts(self) -> dict[str, int]:
        """Rows per table over the packages (items per root table while only extracted)."""
        return total_row_counts(self.packages)

    def asdict(self) -> dict[str, Any]:
        return {"pipeline": {"pipeline_name": self.pipeline_name}, "loads_ids": self.loads_ids,
                "load_packages": [p.asdict() for p in self.packages], "row_counts": self.row_counts}

    def asstr(self, verbosity: int = 0) -> str:
        lines = [f"Load package {p.load_id} is {p.state.upper()}" for p in self.packages]
        if self.row_counts:
            lines.append(f"{self.step.capitalize().rstrip('e')}ed data for the following tables:")
            lines += [f"- {table}: {n} row(s)" for table, n in self.row_counts.items()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.asstr()


class ExtractInfo(StepInfo):
    """The extract step's packages (extracted, with items per root table)."""

    def __init__(self, pipeline_name: str, packages: list[PackageInfo]) -> None:
        super().__init__(pipeline_name, "extract", packages)


class NormalizeInfo(StepInfo):
    """The normalize step's packages, with rows per table (`row_counts`) and `schema_update` each, and the plain
    JSON splits normalized row by row instead of with Arrow, by reason (`row_path_splits`)."""

    def __init__(self, pipeline_name: str, packages: list[PackageInfo]) -> None:
        super().__init__(pipeline_name, "normalize", packages)

    @property
    def row_path_splits(self) -> dict[str, int]:
        """Splits the Arrow path left to the row path, by reason, over the packages (empty: none did)."""
        counts: dict[str, int] = {}
        for package in self.packages:
            for reason, n in package.row_path_splits.items():
                counts[reason] = counts.get(reason, 0) + n
        return counts

    def asdict(self) -> dict[str, Any]:
        return {**super().asdict(), "row_path_splits": self.row_path_splits}

    def asstr(self, verbosity: int = 0) -> str:
        lines = [super().asstr(verbosity)]
        lines += [f"{n} split(s) normalized row by row instead of with Arrow: {reason}"
                  for reason, n in self.row_path_splits.items()]
        return "\n".join(line for line in lines if line)
