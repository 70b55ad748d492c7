"""What a pipeline run returns: load ids, tables, files, row counts and elapsed time per stage.

Example (a run needs Spark)::

    info = pipeline.run([{"id": 1}], table_name="users")
    info.raise_on_failed_jobs()  # None: lakeload raises on a failed load instead of recording failed jobs
    info.asdict()["loads_ids"], info.load_packages[0].state   # (['1795296531.14'], 'loaded')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from lakeload.config.credentials import url_without_password
from lakeload.runtime.jobs import LoadJobInfo, job_infos
from lakeload.schema.typing import TTable


def _now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class PackageInfo:
    """One load package: as it went through normalize and load, or as `pipeline.get_load_package_info()` finds it.

    `state` is "extracted", "normalized" or "loaded". `row_counts` are rows per table once normalized, and items
    per root table while only extracted; `files` the files its manifest lists (in a `LoadInfo`: the files the
    load wrote to the bucket), also as dlt's `jobs`; `schema_update` what its normalize changed in the schema
    (`lakeload.schema.schema_update`).
    """

    load_id: str
    schema_name: str
    row_counts: dict[str, int] = field(default_factory=dict)
    files: list[dict[str, Any]] = field(default_factory=list)
    replaced_tables: list[str] = field(default_factory=list)
    normalize_seconds: float = 0.0
    load_seconds: float = 0.0
    state: str = "loaded"
    created_at: str | None = None
    spark_tasks: int = 0  # normalize's Spark tasks (one per extracted split)
    schema_update: dict[str, TTable] = field(default_factory=dict)  # tables/columns normalize added or changed
    row_path_splits: dict[str, int] = field(default_factory=dict)  # plain JSON splits normalized row by row, by reason
    completed_at: datetime | None = None  # when its load completed (dlt's; a pendulum DateTime), None before

    @property
    def jobs(self) -> dict[str, list[LoadJobInfo]]:
        """dlt's job lists: the files, completed once loaded and new before; never failed (lakeload raises).

        Example (`package` of a completed run, e.g. `info.load_packages[0]`)::

            package.jobs["completed_jobs"][0].job_file_info.table_name   # 'users'
        """
        done = self.state == "loaded"
        jobs = job_infos(self.files, "completed_jobs" if done else "new_jobs", self.created_at, self.load_seconds)
        return {"new_jobs": [] if done else jobs, "started_jobs": [], "failed_jobs": [],
                "completed_jobs": jobs if done else []}

    def asdict(self) -> dict[str, Any]:
        """A JSON-serializable dict with dlt's package keys that lakeload has (load_id, state, schema_name, jobs)."""
        jobs = {state: [{**job.file, **job.asdict()} for job in listed] for state, listed in self.jobs.items()}
        completed_at = self.completed_at.isoformat() if self.completed_at is not None else None
        return {**vars(self), "jobs": jobs, "completed_at": completed_at}


@dataclass
class LoadInfo:
    """Returned by `pipeline.run()` and `pipeline.load()`; `print(info)` shows a summary.

    `bucket_url` is for display: a password in it is masked (`sftp://user:***@host/data`), as dlt's load info
    carries no credentials either. A failed job stops the load with a `LoadStepFailed` error, so a `LoadInfo`
    exists only for packages that loaded completely: `has_failed_jobs` is always False. `stage_seconds` holds each
    stage's own seconds, and `spark_start` when the run started Spark (left out of the stages that waited for it).
    """

    pipeline_name: str
    destination_name: str
    destination_type: str
    dataset_name: str
    bucket_url: str
    packages: list[PackageInfo] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    first_run: bool = False
    started_at: datetime = field(default_factory=_now)
    finished_at: datetime | None = None

    def __post_init__(self) -> None:
        self.bucket_url = url_without_password(self.bucket_url)

    def finish(self, stage_seconds: dict[str, float]) -> None:
        """The load step ended: record the seconds per stage (Spark's start first, then the stages in their order)
        and the finishing time."""
        order = ("spark_start", "extract", "normalize", "load")
        ranked = sorted(stage_seconds, key=lambda k: order.index(k) if k in order else len(order))
        self.stage_seconds, self.finished_at = {k: stage_seconds[k] for k in ranked}, _now()

    @property
    def loads_ids(self) -> list[str]:
        """dlt's name for the ids of the packages loaded."""
        return [p.load_id for p in self.packages]

    @property
    def load_ids(self) -> list[str]:
        return self.loads_ids

    @property
    def load_packages(self) -> list[PackageInfo]:
        """The packages loaded (dlt's name), oldest first, each with `load_id`, `state`, `schema_name`, `jobs`."""
        return self.packages

    @property
    def row_counts(self) -> dict[str, int]:
        return total_row_counts(self.packages)

    @property
    def has_failed_jobs(self) -> bool:
        """Always False: a failed job raises `LoadStepFailed` from `load()`/`run()` instead (see the class doc)."""
        return False

    def raise_on_failed_jobs(self) -> None:
        """dlt's check after a load; nothing to raise here, as a failed job already raised (returns None like dlt).

        Example::

            pipeline.run(data, table_name="users").raise_on_failed_jobs()
        """
        return None

    def asdict(self) -> dict[str, Any]:
        """A JSON-serializable dict with dlt's top-level keys lakeload has, plus lakeload's row counts and timings.

        Example (`info` returned by `pipeline.run()`)::

            json.dumps(info.asdict())
        """
        return {
            "pipeline": {"pipeline_name": self.pipeline_name},
            "pipeline_name": self.pipeline_name,
            "destination_name": self.destination_name,
            "destination_type": self.destination_type,
            "dataset_name": self.dataset_name,
            "first_run": self.first_run,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "loads_ids": self.loads_ids,
            "load_packages": [p.asdict() for p in self.packages],
            "load_ids": self.load_ids,
            "row_counts": self.row_counts,
            "stage_seconds": self.stage_seconds,
            "packages": [{**vars(p), "completed_at": p.asdict()["completed_at"]} for p in self.packages],
        }

    def asstr(self, verbosity: int = 0) -> str:
        """The summary `str(info)` prints; with `verbosity` > 0 also each package's files.

        Example (`info` returned by `pipeline.run()`)::

            print(info.asstr(verbosity=1))
        """
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
            if verbosity > 0:
                lines.extend(f"    {f.get('path', f)}" for f in p.files)
        if self.stage_seconds:
            stages = ", ".join(f"{k.replace('_', ' ')} {v:.2f} s" for k, v in self.stage_seconds.items())
            lines.append(f"Elapsed: {stages}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.asstr()


def total_row_counts(packages: list[PackageInfo]) -> dict[str, int]:
    """Rows per table over `packages`."""
    counts: dict[str, int] = {}
    for package in packages:
        for table, n in package.row_counts.items():
            counts[table] = counts.get(table, 0) + n
    return counts
