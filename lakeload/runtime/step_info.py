"""What the extract and normalize steps of a run did, as dlt's `ExtractInfo` and `NormalizeInfo`
(`pipeline.last_trace.last_extract_info`, `.last_normalize_info`; the load step's is the `LoadInfo`).

Example (a run needs Spark)::

    p.run(data, table_name="users")
    p.last_trace.last_normalize_info.row_counts   # {'users': 2}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, TypedDict, cast

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
        """dlt's text: the rows per table, then a line per package."""
        done = f"{self.step.capitalize().rstrip('e')}ed"
        if self.row_counts:
            text = f"{done} data for the following tables:\n" + "".join(
                f"- {table}: {n} row(s)\n" for table, n in self.row_counts.items())
        else:
            text = f"No data found to {self.step}"
        return text + packages_text(self.packages)

    def __str__(self) -> str:
        return self.asstr()


def packages_text(packages: list[PackageInfo]) -> str:
    """dlt's lines of packages in a step's text, each after a line break.

    >>> packages_text([PackageInfo("1795296531.14", "shop", state="extracted")])
    '\\nLoad package 1795296531.14 is EXTRACTED and NOT YET LOADED to the destination and contains no failed jobs'
    """
    return "".join(
        f"\nLoad package {p.load_id} is {p.state.upper()}"
        f"{'' if p.completed_at is not None else ' and NOT YET LOADED to the destination'} and contains no failed jobs"
        for p in packages
    )


class WriterMetrics(NamedTuple):
    """dlt's `DataWriterMetrics` of one table, resource or file of an extract."""

    file_path: str
    items_count: int
    file_size: int
    created: float
    last_modified: float


class ExtractMetrics(TypedDict):
    """dlt's metrics of one extract of a package (`ExtractInfo.metrics[load_id][0]`)."""

    started_at: datetime
    finished_at: datetime
    schema_name: str
    job_metrics: dict[str, WriterMetrics]  # per extracted file
    table_metrics: dict[str, WriterMetrics]  # per root table
    resource_metrics: dict[str, WriterMetrics]  # per resource
    dag: list[tuple[str, str]]  # (parent, resource) per resource iterated
    hints: dict[str, dict[str, Any]]  # the hints each resource gave (write_disposition, primary_key, ...)
    inputs: list[dict[str, Any]]


class ExtractInfo(StepInfo):
    """What `pipeline.extract()` returns, as dlt's: `loads_ids`, `load_packages` (extracted, with items per root
    table), `metrics` (per load id, a list of `ExtractMetrics`), `pipeline`, `first_run`, `asdict()` and `str()`.

    Example (`extract()` runs no Spark)::

        info = pipeline.extract([{"id": 1}], table_name="users")
        info.loads_ids, info.metrics[info.loads_ids[0]][0]["table_metrics"]["users"].items_count   # ([...], 1)
    """

    def __init__(self, pipeline_name: str, packages: list[PackageInfo], metrics: dict[str, list[ExtractMetrics]] | None = None,
                 pipeline: Any = None, first_run: bool = False) -> None:
        super().__init__(pipeline_name, "extract", packages)
        self.metrics: dict[str, list[ExtractMetrics]] = metrics or {}
        self.pipeline, self.first_run = pipeline, first_run

    @property
    def started_at(self) -> datetime | None:
        """When the earliest extract of its packages started (None without metrics)."""
        return min((m["started_at"] for ms in self.metrics.values() for m in ms), default=None)

    @property
    def finished_at(self) -> datetime | None:
        """When the latest extract of its packages ended (None without metrics)."""
        return max((m["finished_at"] for ms in self.metrics.values() for m in ms), default=None)

    @property
    def is_empty(self) -> bool:
        """True when the step made no package."""
        return not self.loads_ids

    def asdict(self) -> dict[str, Any]:
        """dlt's dict of an extract: the packages, and its metrics as flat lists (`table_metrics`,
        `resource_metrics`, `job_metrics`, `dag`, `hints`, `inputs`) whose entries name their `load_id`."""
        flat: dict[str, list[Any]] = {key: [] for key in ("job_metrics", "table_metrics", "resource_metrics", "dag",
                                                           "hints", "inputs")}
        for load_id, listed in self.metrics.items():
            for index, metrics in enumerate(listed):
                extend = {"load_id": load_id, "extract_idx": index}
                for key, name in (("job_metrics", "job_id"), ("table_metrics", "table_name"),
                                  ("resource_metrics", "resource_name")):
                    writers = cast(dict[str, dict[str, WriterMetrics]], metrics)[key]
                    flat[key] += [{**m._asdict(), **extend, name: entity} for entity, m in writers.items()]
                flat["dag"] += [{**extend, "parent_name": parent, "resource_name": name} for parent, name in metrics["dag"]]
                flat["hints"] += [{**extend, "resource_name": name, **hints} for name, hints in metrics["hints"].items()]
                flat["inputs"] += [{**extend, **entry} for entry in metrics["inputs"]]
        return {"pipeline": {"pipeline_name": self.pipeline_name}, "loads_ids": self.loads_ids,
                "load_packages": [p.asdict() for p in self.packages], "first_run": self.first_run,
                "started_at": self.started_at, "finished_at": self.finished_at, **flat}

    def asstr(self, verbosity: int = 0) -> str:
        """dlt's text: a line per package, after an empty one."""
        return packages_text(self.packages)


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
