"""Child process for the lock tests: holds a pipeline's lock, says so through a file, and keeps it until killed.

usage: lock_child.py FOLDER PIPELINE_NAME READY_FILE
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from lakeload.runtime.lock import FAIL, LockPolicy, PipelineLock

if __name__ == "__main__":
    folder, pipeline_name, ready = sys.argv[1:4]
    with PipelineLock(folder, pipeline_name).hold(LockPolicy(FAIL)):
        Path(ready).write_text("holding")
        while True:
            time.sleep(1)
