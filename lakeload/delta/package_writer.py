"""`PackageWriter`: what a tree load (`tree.TreeLoad`) and a merge (`merge.MergeJob`) use of the Delta loader
(`loader.DeltaLoader` implements it): the session, the package's bucket, and writing a package's files into
opened tables. The loader makes the tree loads, so they know it by this protocol only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lakeload.delta.commit import DeltaTarget
    from lakeload.delta.marks import LoadMark
    from lakeload.errors import TableConflictError
    from lakeload.kernel.contracts import TAddAction, TLoadedFile
    from lakeload.kernel.delta.files import DeltaFileSpec
    from lakeload.kernel.spark.working import WorkingStore
    from lakeload.schema.schema import Schema
    from lakeload.storage.manifest import NormalizedPackage, PackageFile


class PackageWriter(Protocol):
    """Writes one package's normalized files into Delta tables (see the module docstring)."""

    spark: SparkSession
    working: WorkingStore | None
    pipeline_name: str
    committed: list[TLoadedFile]  # the files committed so far (load-result entries)
    format_label: str  # the format's name in messages ("Delta", "Iceberg")
    conflict_error: type[TableConflictError]  # raised when other writers keep committing first

    def open_tree(self, schema: Schema, tree: list[str]) -> dict[str, DeltaTarget]:
        """The tables of a tree, root first, each opened."""
        ...

    def write_tree(
        self, targets: list[DeltaTarget], package: NormalizedPackage, by_table: dict[str, list[PackageFile]],
        modes: dict[str, str], mark: LoadMark, strict: bool = False,
    ) -> None:
        """Append (or replace with) the package's files of each target, one commit per table."""
        ...

    def package_adds(
        self, targets: list[DeltaTarget], load_id: str, by_table: dict[str, list[PackageFile]], operation: str | dict[str, str]
    ) -> dict[str, list[TAddAction]]:
        """The package's files of the targets written as data files (no commit): add actions per table."""
        ...

    def file_spec(self, target: DeltaTarget, load_id: str, operation: str) -> DeltaFileSpec:
        """How executors write data files of `target`."""
        ...
