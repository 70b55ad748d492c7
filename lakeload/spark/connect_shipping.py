"""Shipping lakeload's own code to a Spark Connect server whose Python workers may not have it installed.

The first time a pipeline uses a Connect session, lakeload adds a zip of the `lakeload` package this
client imports (with each module's bytecode beside it, see `compiled`) to the session as a Python file artifact (`spark.addArtifacts(zip, pyfile=True)`); the
server puts it first on its Python workers' path for this session's tasks. The zip is built once per
lakeload version and content into `~/.lakeload/cache/artifacts/lakeload-<version>-<hash>.zip`; the name
carries both, so clients of different lakeload versions (or edited working copies) never clash on a server.
Spark Connect also keeps every session's artifacts apart (its own artifact folder, and Python workers
started per session artifact UUID), so one server can run clients of several versions at once.

User functions (sink functions, layout callbacks, `add_map` functions) travel by cloudpickle: those from
`__main__` and from modules outside site-packages by value (`shipping.py`); a function from an installed
package the server lacks fails with an error naming the module and `spark.addArtifacts`.

Example (on a Spark Connect session)::

    ship_lakeload(spark)                 # once per session; later calls return at once
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
import zipfile
from typing import TYPE_CHECKING

from lakeload.about import PACKAGE_DIR, VERSION
from lakeload.errors import SparkSetupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CACHE_DIR = os.path.join("~", ".lakeload", "cache", "artifacts")
_SKIPPED_DIRS = ("__pycache__",)
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
_ZIP_LAYOUT = b"zip-layout-2"  # fixed entry times and modes, .pyc beside each .py
_ALREADY_THERE = "ARTIFACT_ALREADY_EXISTS"
_lock = threading.Lock()
_shipped: set[str] = set()  # ids of the Connect sessions that have lakeload's zip


def package_dir() -> str:
    """The folder of the `lakeload` package this process imported."""
    return PACKAGE_DIR


def _package_files(root: str) -> list[tuple[str, str]]:
    """(path, name inside the zip) of every file of the package, sorted, caches left out."""
    files = []
    parent = os.path.dirname(root)
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(names):
            if not name.endswith(_SKIPPED_SUFFIXES):
                path = os.path.join(folder, name)
                files.append((path, os.path.relpath(path, parent).replace(os.sep, "/")))
    return files


def content_hash(files: list[tuple[str, str]]) -> str:
    """A short hash of the files' names and contents, this Python's bytecode version and the zip's layout (the
    zip holds `.pyc` files: one name, one content)."""
    from importlib.util import MAGIC_NUMBER

    digest = hashlib.sha256(MAGIC_NUMBER + _ZIP_LAYOUT)
    for path, name in files:
        digest.update(name.encode() + b"\0")
        with open(path, "rb") as handle:
            digest.update(hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()[:16]


def package_archive(cache_dir: str | None = None) -> str:
    """The zip of lakeload's package as this client imports it, built once per version and content.

    >>> tmp = tempfile.TemporaryDirectory()      # the cache folder; ~/.lakeload/cache/artifacts by default
    >>> os.path.basename(package_archive(tmp.name))
    'lakeload-0.1.0-....zip'
    """

    files = _package_files(package_dir())
    folder = os.path.expanduser(cache_dir or CACHE_DIR)
    path = os.path.join(folder, f"lakeload-{VERSION}-{content_hash(files)}.zip")
    if os.path.exists(path):
        return path
    os.makedirs(folder, exist_ok=True)
    handle, partial = tempfile.mkstemp(suffix=".zip.part", dir=folder)
    os.close(handle)
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for source, name in files:
                with open(source, "rb") as data:
                    archive.writestr(_entry(name), data.read())
                if name.endswith(".py"):
                    archive.writestr(_entry(name + "c"), compiled(source, name))
        os.replace(partial, path)  # concurrent builders write the same bytes: last one wins
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return path


def _entry(name: str) -> zipfile.ZipInfo:
    """A zip entry with fixed time and mode: every client builds the same bytes for the same name (a Connect server
    refuses an artifact of the same name with other bytes, `ARTIFACT_ALREADY_EXISTS`)."""
    entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    entry.compress_type = zipfile.ZIP_DEFLATED
    entry.external_attr = 0o644 << 16
    return entry


def compiled(source: str, name: str) -> bytes:
    """The bytecode of a module as an unchecked hash-based `.pyc` (PEP 552) for the zip, beside its `.py`.

    Python imports a zip's modules without writing caches, so a server's new Python workers (started anew for each
    Connect session) would compile every module of lakeload on each import: ~0.3-0.5 s of a small run's first task.
    zipimport takes `<module>.pyc` first when its magic number is this Python's, else the `.py` (a server of another
    Python version); the zip's name carries the content's hash, so a `.pyc` never outlives its source.
    """
    import marshal
    from importlib.util import MAGIC_NUMBER, source_hash

    with open(source, "rb") as handle:
        data = handle.read()
    code = compile(data, name, "exec", dont_inherit=True)
    flags = (0b01).to_bytes(4, "little")  # hash-based, not checked against the source
    return MAGIC_NUMBER + flags + source_hash(data) + marshal.dumps(code)


def ship_lakeload(session: SparkSession) -> None:
    """Add lakeload's zip to the Connect `session` as a Python file artifact, once per session."""
    session_id = str(session.session_id)  # type: ignore[attr-defined]  # Connect sessions only
    with _lock:
        if session_id in _shipped:
            return
        path = package_archive()
        try:
            session.addArtifacts(path, pyfile=True)
        except Exception as exc:
            if _ALREADY_THERE in str(exc):  # the session has this zip (its name is its content's hash): shipped
                _shipped.add(session_id)
                return
            raise SparkSetupError(
                f"Could not ship lakeload's code ({os.path.basename(path)}) to the Spark Connect server: "
                f"{type(exc).__name__} {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}. The server must "
                "accept artifacts (spark.addArtifacts); otherwise install the same lakeload version in its Python."
            ) from None
        _shipped.add(session_id)


def missing_module_hint(message: str) -> str:
    """The fix for a task that failed because the server's Python cannot import a module, else ''.

    >>> missing_module_hint("ModuleNotFoundError: No module named 'mylib'")[:40]
    "The Spark server's Python workers cannot"
    """
    match = _MISSING_MODULE.search(message)
    if not match:
        return ""
    top = match.group(1).split(".")[0]
    return (
        f"The Spark server's Python workers cannot import module '{top}'. Install it in the server's Python, or "
        f"ship it with your Connect session before the run: spark.addArtifacts('<path to {top}.py or a zip of "
        f"the {top} package>', pyfile=True)."
    )
