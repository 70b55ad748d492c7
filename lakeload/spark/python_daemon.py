"""Which Python daemon the local sessions lakeload starts use: `kernel.spark.daemon` when its workers can import it.

Spark starts its Python daemon with `python -m <spark.python.daemon.module>` before any task, so the module must
be importable by the executors' interpreter from its own installation (not from files a job ships later).
lakeload sets it only for local masters (`local[*]`, `local-cluster[...]`, a local Connect server), only when
the executors run this very interpreter and lakeload is installed in it (a wheel, or an editable install of
this checkout), and never over a daemon module the user configured.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import sys
from collections.abc import Mapping
from urllib.parse import unquote, urlparse

from lakeload.about import PACKAGE_DIR
from lakeload.spark.settings import executors_python, is_local_master

DAEMON_KEY = "spark.python.daemon.module"
DAEMON_MODULE = "lakeload.kernel.spark.daemon"


def with_python_daemon(master: str, conf: Mapping[str, str]) -> dict[str, str]:
    """`conf` with lakeload's daemon module when the executors of `master` can start it (see the module doc)."""
    if DAEMON_KEY in conf or not is_local_master(master) or not _is_this_interpreter(executors_python(conf)):
        return dict(conf)
    return {**conf, DAEMON_KEY: DAEMON_MODULE} if lakeload_installed() else dict(conf)


def _is_this_interpreter(python: str) -> bool:
    found = shutil.which(python) or python
    return os.path.abspath(found) == os.path.abspath(sys.executable)


def lakeload_installed() -> bool:
    """True when the lakeload this process runs is the one installed in its interpreter (so `python -m` finds it
    in any working directory)."""
    try:
        dist = importlib.metadata.distribution("lakeload")
    except importlib.metadata.PackageNotFoundError:
        return False
    package = os.path.realpath(PACKAGE_DIR)
    if os.path.realpath(str(dist.locate_file("lakeload"))) == package:
        return True
    return _editable_root(dist) == os.path.dirname(package)


def _editable_root(dist: importlib.metadata.Distribution) -> str | None:
    """The source directory of an editable install (PEP 660's `direct_url.json`), or None."""
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    url = urlparse(str(record.get("url", "")))
    if url.scheme != "file" or not record.get("dir_info", {}).get("editable"):
        return None
    return os.path.realpath(unquote(url.path))
