"""What a pipeline run returns: load ids, tables, files, row counts and elapsed time per stage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakeload.config.credentials import url_without_password


@dataclass
class PackageInfo:
    """One load package as it went through normalize and load."""

    load_id: str
    schema_name: str
    row_counts: dict[str, int] = field(default_factory=dict)
    files: list[dict[str, Any]] = field(default_factory=list)
    replaced_tables: list[str] = field(default_factory=list)
    normalize_seconds: float = 0.0
    load_seconds: float = 0.0


@dataclass
class LoadInfo:
    """Returned by `pipeline.run()` and `pipeline.load()`; `print(info)` shows a summary.

    `bucket_url` is for display: a password in it is masked (`sftp://user:***@host/data`), as dlt's load info
    carries no credentials either.
    """

    pipeline_name: str
    destination_name: str
    destination_type: str
    dataset_name: str
    bucket_url: str
    packages: list[PackageInfo] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bucket_url = url_without_password(self.bucket_url)

    @property
    def loads_ids(self) -> list[str]:
        """dlt's name for the ids of the packages loaded."""
        return [p.load_id for p in self.packages]

    @property
    def load_ids(self) -> list[str]:
        return self.loads_ids

    @property
    def row_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for package in self.packages:
            for table, n in package.row_counts.items():
                counts[table] = counts.get(table, 0) + n
        return counts

    @property
    def has_failed_jobs(self) -> bool:
        return False

    def asdict(self) -> dict[str, Any]:
        return {
            "pipeline_name": self.pipeline_name,
            "destination_name": self.destination_name,
            "destination_type": self.destination_type,
            "dataset_name": self.dataset_name,
            "load_ids": self.load_ids,
            "row_counts": self.row_counts,
            "stage_seconds": self.stage_seconds,
            "packages": [vars(p) for p in self.packages],
        }

    def __str__(self) -> str:
        lines = [
            f"Pipeline {self.pipeline_name} load step completed in {sum(p.load_seconds for p in self.packages):.2f} s",
            f"{len(self.packages)} load package(s) were loaded to destination {self.destination_name} "
            f"(type {self.destination_type}) and into dataset {self.dataset_name}",
            f"The {self.destination_name} destination used {self.bucket_url} location to store data",
        ]
        for p in self.packages:
            lines.append(f"Load package {p.load_id} is LOADED and contains no failed jobs ({len(p.files)} files)")
            for table, n in p.row_counts.items():
                lines.append(f"  {table}: {n} rows")
        if self.stage_seconds:
            stages = ", ".join(f"{k} {v:.2f} s" for k, v in self.stage_seconds.items())
            lines.append(f"Elapsed: {stages}")
        return "\n".join(lines)
