"""PySpark's pandas >= 3 warning, silenced exactly where lakeload's own calls raise it.

PySpark 4.3 warns "PySpark does not yet fully support pandas >= 3.0.0" (a `FutureWarning`) from its
pandas version check. lakeload reaches that check in two places, neither of which converts any data
between Spark and pandas: starting a SparkContext (py4j's converters import `pyspark.testing.utils`,
which checks at import), and `DataFrame.mapInArrow` (built on an internal pandas UDF; the tasks
exchange Arrow batches only). Those two calls run inside `pandas_check_silenced()`. The user's own
pandas conversions (`toPandas()`, `createDataFrame(pandas_frame)`, pandas UDFs) keep PySpark's warning.

>>> with pandas_check_silenced():
...     pass
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from lakeload.spark.kernel_code import require_kernel

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

PANDAS_WARNING = "PySpark does not yet fully support pandas"
# catch_warnings() swaps the process-wide filter list: one thread at a time, or a filter could outlive its block
_lock = threading.RLock()


@contextmanager
def pandas_check_silenced() -> Iterator[None]:
    """Drop PySpark's pandas-version `FutureWarning` (and only it) raised inside the block."""
    with _lock, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=PANDAS_WARNING, category=FutureWarning)
        yield


def import_pandas_check() -> None:
    """Import, silenced, what PySpark's pandas version check imports (`pyspark.testing.utils`, pandas: ~0.5 s).

    A SparkContext's start imports it at its first call into the JVM; `session._build` runs this in a thread while
    the driver's JVM boots and the driver would only wait. A failing import is left to the start, which raises it.
    """
    with contextlib.suppress(Exception), pandas_check_silenced():
        import pyspark.testing.utils  # noqa: F401


def map_in_arrow(frame: DataFrame, func: Callable[[Iterator[Any]], Iterator[Any]], schema: StructType | str) -> DataFrame:
    """`frame.mapInArrow(func, schema)` without PySpark's pandas warning (building the plan only; no data moves).

    Every lakeload function that runs in Spark's Python workers goes through here (a kernel function only,
    `kernel_code.require_kernel`); on a Spark Connect session,
    lakeload's code is shipped to the session first (`connect_shipping`, once per session).

    Example (needs a Spark session; the function must be a kernel function, a lambda is refused)::

        from lakeload.kernel.spark.warm import warm_worker   # passes the batches through
        rows = map_in_arrow(spark.range(3), warm_worker, "id long").collect()
    """
    from lakeload.spark.session_kind import is_connect

    require_kernel(func)
    if is_connect(frame.sparkSession):
        from lakeload.spark.connect_shipping import ship_lakeload

        ship_lakeload(frame.sparkSession)
    with pandas_check_silenced():
        return frame.mapInArrow(func, schema)
