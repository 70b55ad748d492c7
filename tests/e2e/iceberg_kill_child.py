"""Child process for test_iceberg_kill.py: merge the second load into an Iceberg tree and die with SIGKILL right
before the commit number `kill_at` (1-based, in commit order) or, with `after`, right after the last one.

usage: iceberg_kill_child.py BUCKET PIPELINES_DIR KILL_AT
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from test_iceberg_kill import SECOND, pipeline, users

from lakeload.iceberg.target import IcebergTarget


def main() -> None:
    bucket, pipes, kill_at = sys.argv[1], sys.argv[2], sys.argv[3]
    real = IcebergTarget.commit
    count = 0

    def commit(self: IcebergTarget, *args: Any, **kwargs: Any) -> None:
        nonlocal count
        count += 1
        if str(count) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        real(self, *args, **kwargs)

    IcebergTarget.commit = commit  # type: ignore[method-assign]
    p = pipeline(bucket, pipes)
    p.run(users(SECOND))
    if kill_at == "after":
        os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
