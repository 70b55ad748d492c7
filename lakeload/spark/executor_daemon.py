"""Moved to `lakeload.kernel.spark.daemon` (all executor code lives in the kernel). A cluster configured with
`spark.python.daemon.module = lakeload.spark.executor_daemon` keeps working: this module runs the same daemon.
"""

from __future__ import annotations

from lakeload.kernel.spark.daemon import main

if __name__ == "__main__":
    main()
