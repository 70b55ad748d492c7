"""Executor-safe: pyspark's Python daemon, started without the copies of pyspark that Spark's launcher puts first.

Spark starts its Python daemon (which forks the Python workers) with `PYTHONPATH` led by
`$SPARK_HOME/python/lib/pyspark.zip`, py4j's zip and `spark-core`'s jar. With pyspark installed by pip,
`SPARK_HOME` is the installed package itself, so those archives hold the very code the package has beside
them, but without compiled bytecode: every daemon compiled pyspark's modules from source (~1 s of CPU before a
session's first Python task), every worker compiled `pyspark.worker`'s, and every task re-read the archives'
directories (`importlib.invalidate_caches()` in pyspark's worker, 0.2-0.35 s per task here).

`python -m lakeload.kernel.spark.daemon` (Spark's `spark.python.daemon.module`, set by lakeload for local
sessions it starts, see `session.py`) removes from `sys.path` only the entries inside the installed pyspark
package, so the same modules load from the package; then freezes what it imported away from the cycle
collector (the forked workers inherit it, as Python's documentation advises for fork servers) and runs
pyspark's own daemon. A Spark distribution elsewhere (`SPARK_HOME` not the installed package) keeps its
archives first.
"""

from __future__ import annotations

import gc
import os
import sys
from importlib.machinery import PathFinder


def bundled_entries(path: list[str]) -> list[str]:
    """The entries of `path` that lie inside the pyspark package installed beside them (none if there is none, or
    if py4j is not installed beside it either)."""
    archives = [entry for entry in path if _inside_pyspark_home(entry)]
    rest = [entry for entry in path if entry not in archives]
    spec = PathFinder.find_spec("pyspark", rest)
    if spec is None or not spec.submodule_search_locations or PathFinder.find_spec("py4j", rest) is None:
        return []  # the archives are the only pyspark (or py4j) there is
    home = os.path.realpath(next(iter(spec.submodule_search_locations)))
    return [entry for entry in archives if os.path.realpath(entry).startswith(home + os.sep)]


def _inside_pyspark_home(entry: str) -> bool:
    home = os.environ.get("SPARK_HOME")
    return home is not None and os.path.realpath(entry).startswith(os.path.realpath(home) + os.sep)


def main() -> None:
    for entry in bundled_entries(sys.path):
        sys.path.remove(entry)
        sys.path_importer_cache.pop(entry, None)
    from pyspark import daemon

    gc.freeze()
    daemon.manager()


if __name__ == "__main__":
    main()
