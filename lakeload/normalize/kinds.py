"""The kinds of splits normalize takes, behind one protocol: what runs on executors, and Spark DataFrames.

Every extracted file of a package (a split) is normalized in two passes: pass 1 infers its schema additions and
writes its rows; the driver folds the reports in split order (`normalize.fold`) and then writes what is left.
`SplitKind` is that protocol from the driver's side, with one `SplitReport` (`kernel.normalize.report`) for all:

- `ExecutorSplits`: records, JSONL pages, files and Arrow items. Pass 1 runs on executors, one Spark task per
  split (`kernel.normalize.tasks.normalize_split`), where the kernel's items normalizers (Arrow items, Arrow
  JSON, row by row) take the split in turn;
- `FrameSplits`: Spark DataFrames. Each is planned on the driver against the schema folded so far (Spark
  expressions, no job runs), and its tables are written by Spark once the fold is done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from lakeload.kernel.contracts import TPackageFile
from lakeload.kernel.normalize.plan import FRAME_FORMAT, NormalizePlan, Split
from lakeload.kernel.normalize.report import SplitReport
from lakeload.kernel.normalize.tasks import normalize_split
from lakeload.normalize.frame_splits import FramePlan, plan_frame_split, write_frame_tables
from lakeload.schema.typing import TTable
from lakeload.spark.session import run_tasks

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.kernel.spark.working import WorkingStore

Progress = Callable[[int], None] | None


class SplitKind(Protocol):
    """One kind of split, from pass 1 to the files it writes after the fold."""

    def takes(self, split: Split) -> bool:
        """Whether `split` is of this kind."""

    def start(self, plan: NormalizePlan, splits: list[Split]) -> None:
        """Begin pass 1 of this kind's `splits` (all that can run at once)."""

    def report(self, plan: NormalizePlan, split: Split, tables: dict[str, TTable]) -> SplitReport:
        """The pass-1 report of `split`, asked in split order; `tables` is the schema folded so far."""

    def again(self, seeded: NormalizePlan, split: Split) -> SplitReport:
        """Pass 1 of `split` again, from the schema of the splits before it (`seeded.tables`)."""

    def write(self, plan: NormalizePlan) -> list[TPackageFile]:
        """After the fold: the files this kind still writes, with the tables' final schemas."""


class ExecutorSplits:
    """Records, JSONL pages, files and Arrow items: pass 1 on executors, one task per split; `early` holds the
    reports of splits normalized while extract ran."""

    def __init__(self, spark: SparkSession, working: WorkingStore | None, early: dict[int, SplitReport],
                 on_progress: Progress = None) -> None:
        self.spark, self.working, self.early, self.on_progress = spark, working, early, on_progress
        self.results: dict[int, SplitReport] = {}

    def takes(self, split: Split) -> bool:
        return split.file_format != FRAME_FORMAT

    def start(self, plan: NormalizePlan, splits: list[Split]) -> None:
        left = [s for s in splits if s.index not in self.early]
        computed = run_tasks(self.spark, normalize_split, plan, left, f"lakeload normalize {plan.load_id}",
                             self.on_progress, working=self.working)
        self.results = {split.index: result for split, result in zip(left, computed, strict=True)}
        self.results.update(self.early)  # the package's splits normalized early (`normalizer._matching`)
        if self.early and self.on_progress is not None:
            self.on_progress(len(self.early))  # done while extract ran

    def report(self, plan: NormalizePlan, split: Split, tables: dict[str, TTable]) -> SplitReport:
        return self.results[split.index]

    def again(self, seeded: NormalizePlan, split: Split) -> SplitReport:
        description = f"lakeload normalize {seeded.load_id}: re-infer"
        return run_tasks(self.spark, normalize_split, seeded, [split], description, working=self.working)[0]

    def write(self, plan: NormalizePlan) -> list[TPackageFile]:
        return []  # pass 1 wrote final files or Arrow chunks; the chunks' finalize jobs follow the fold


class FrameSplits:
    """Spark DataFrames: planned on the driver against the folded schema, written by Spark after the fold."""

    def __init__(self, spark: SparkSession, on_progress: Progress = None) -> None:
        self.spark, self.on_progress = spark, on_progress
        self.planned: list[tuple[Split, FramePlan]] = []

    def takes(self, split: Split) -> bool:
        return split.file_format == FRAME_FORMAT

    def start(self, plan: NormalizePlan, splits: list[Split]) -> None:
        self.planned = []  # each is planned when the fold reaches it

    def report(self, plan: NormalizePlan, split: Split, tables: dict[str, TTable]) -> SplitReport:
        frame_plan = plan_frame_split(self.spark, plan, split, tables)
        self.planned.append((split, frame_plan))
        return frame_plan.report

    def again(self, seeded: NormalizePlan, split: Split) -> SplitReport:
        self.planned = [(s, p) for s, p in self.planned if s.index != split.index]
        return self.report(seeded, split, seeded.tables)

    def write(self, plan: NormalizePlan) -> list[TPackageFile]:
        return write_frame_tables(self.spark, plan, self.planned, self.on_progress)
