"""dlt's own documentation snippets, run by dlt 1.31 (the oracle) and by lakeload with ``import lakeload as dlt``.

The snippets are test data in ``dlt_docs/`` (copied from dlt-hub/dlt, each file naming its source and commit; see
``dlt_docs/NOTICE``); ``dlt_docs/cases.toml`` names each case:

* ``kind = "snippet"``: one function of a website snippet file (``def xxx_snippet()``/``def test_xxx()``), run by
  pytest as dlt's docs CI runs them (its fixtures: ``pipeline``, ``dataset``, ``tmp_path``...);
* ``kind = "script"``: one example of ``docs/examples``, run as ``__main__``;
* ``kind = "cells"``: cells of a course notebook (marimo) run in order by ``dlt_docs_cells.py``.

Each case runs in its own process, in a fresh folder as working directory with its own HOME and no environment but
the OS's (``case_env``), with dlt's test helpers the snippets import (``dlt_docs/support/``) beside it. For lakeload,
the text of every ``.py`` file is import-substituted first (``substitute``); nothing else changes.

Files a case reads, seeded before it runs (the suite has no network): ``files = {"<path in the case folder>" =
"<file of dlt_docs/>"}`` copies files into the case's folder (a config file, a notebook's ``local_data/...``);
``downloads = {"<URL>" = "<file of dlt_docs/>"}`` (cells only) answers a cell's download of URL (urllib's
``urlopen``/``urlretrieve`` or ``requests``) with that local file, so a cell that downloads a sample and then loads
it runs unchanged (``dlt_docs_cells.py --serve``); any other URL fails. The samples in ``dlt_docs/data/`` are made
by ``dlt_docs/data/make_data.py`` with the columns and types of the files the notebooks download (TimeStored's
``userdata.parquet``, jsonplaceholder's users); cells that only download are left out of ``cells`` when nothing
later reads their names.

What a case's keys mean (``cases.toml``): ``dlt = "pass"`` records that dlt 1.31 passes it (checked by the slow
``test_dlt_passes``); ``known_failure = "<cause>"`` marks a lakeload gap not fixed yet (the lakeload test is then
``xfail(strict=True)``: it fails the moment the case passes, and the mark must go); ``difference = "<why>"`` with
``difference_says = "<text>"`` is a deliberate difference: lakeload must fail there and say ``<text>``;
``fast = true`` puts the lakeload run in the test command (dataset access, schema hints, merge strategies and
contracts, the filesystem source, and a few more: 52 cases, ~3.5 min on one warm engine); the others run with
``LAKELOAD_DOCS_SNIPPETS=all`` (~5.5 min, every lakeload case on one warm engine), and dlt's side with
``LAKELOAD_DLT_ORACLE=1`` (~25 min): both are run when a case is added or lakeload's compat layer changes.

dlt's typed relations (``pipeline.dataset()``) need sqlglot and duckdb older than the ones lakeload's environment has:
dlt's processes get them from an overlay installed once with ``pip install --target`` (``dlt_overlay``), on their
``PYTHONPATH`` only.

Run one case by hand: ``python tests/compat/test_dlt_docs_snippets.py lakeload dataset.row_counts`` (or ``dlt``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lakeload.config.toml_reader import tomllib

HERE = Path(__file__).resolve().parent
DATA = HERE / "dlt_docs"
CELLS = HERE / "dlt_docs_cells.py"
TIMEOUT = 420
# dlt 1.31's typed relations build SQL with sqlglot's API of before 28 and read with duckdb 1.x
OVERLAY_PINS = ["sqlglot==27.29.0", "duckdb==1.4.2"]
KINDS = {"snippet", "script", "cells"}
NEEDS = {"duckdb", "filesystem", "pandas", "pyarrow", "yaml", "sink", "config"}
# the OS environment a case keeps; everything else (config variables, credentials) stays out
ENV_KEEP = {"PATH", "LANG", "LANGUAGE", "TZ", "TMPDIR", "USER", "LOGNAME", "JAVA_HOME", "SPARK_HOME",
            "SPARK_SUBMIT_OPTS", "XDG_CACHE_HOME", "VIRTUAL_ENV", "SYSTEMROOT"}


@dataclass(frozen=True)
class Case:
    """One entry of ``cases.toml``."""

    id: str
    kind: str
    file: str
    function: str | None = None
    cells: tuple[int, ...] = ()
    raises: str | None = None  # cells: the last cell is shown failing in the notebook; its error says this
    needs: tuple[str, ...] = ()
    config: str | None = None  # "config/x.toml" or "config/x.toml#snippet_name": becomes .dlt/config.toml
    files: dict[str, str] = field(default_factory=dict)  # target in the case folder -> file of dlt_docs/
    downloads: dict[str, str] = field(default_factory=dict)  # cells: URL a cell downloads -> file of dlt_docs/
    dlt: str = "pass"
    known_failure: str | None = None
    difference: str | None = None
    difference_says: str | None = None
    fast: bool = False


def load_cases() -> list[Case]:
    raw = tomllib.loads((DATA / "cases.toml").read_text(encoding="utf-8"))["case"]
    cases = []
    for entry in raw:
        entry = dict(entry)
        entry["cells"] = tuple(entry.get("cells", ()))
        entry["needs"] = tuple(entry.get("needs", ()))
        cases.append(Case(**entry))
    return cases


CASES = load_cases()


# ------------------------------------------------------------------------------------------ substitution

_IMPORT = re.compile(r"^(?P<indent>[ \t]*)import dlt(?P<tail>[ \t]*(#.*)?)$", re.M)
_IMPORT_AS = re.compile(r"^(?P<indent>[ \t]*)import dlt as (?P<name>\w+)", re.M)
_FROM = re.compile(r"^(?P<indent>[ \t]*)from dlt(?P<rest>(\.[\w.]+)?) import ", re.M)
# dlt's project template the dataset snippets load: its copy in dlt_docs/support/ (substituted in turn)
TEMPLATES = {"dlt._workspace._templates._single_file_templates.fruitshop_pipeline": "fruitshop_pipeline"}


def substitute(text: str) -> str:
    """dlt's imports replaced by lakeload's, nothing else: ``import dlt`` -> ``import lakeload as dlt``,
    ``from dlt.common.typing import X`` -> ``from lakeload.common.typing import X``.

    >>> substitute("import dlt\\nfrom dlt.common import json\\n    from dlt import mark")
    'import lakeload as dlt\\nfrom lakeload.common import json\\n    from lakeload import mark'
    """
    for module, local in TEMPLATES.items():
        text = text.replace(f"from {module} import", f"from {local} import")
    text = _IMPORT.sub(lambda m: f"{m['indent']}import lakeload as dlt{m['tail']}", text)
    text = _IMPORT_AS.sub(lambda m: f"{m['indent']}import lakeload as {m['name']}", text)
    return _FROM.sub(lambda m: f"{m['indent']}from lakeload{m['rest']} import ", text)


# ------------------------------------------------------------------------------------------ one case


def toml_snippet(text: str, name: str) -> str:
    """The lines between ``# @@@DLT_SNIPPET_START name`` and ``# @@@DLT_SNIPPET_END name`` of a TOML file."""
    match = re.search(rf"@@@DLT_SNIPPET_START {re.escape(name)}\n(.*?)\n[^\n]*@@@DLT_SNIPPET_END {re.escape(name)}",
                      text, re.S)
    assert match, f"no TOML snippet {name}"
    return match.group(1) + "\n"


def prepare(case: Case, folder: Path, tool: str) -> list[str]:
    """Lay the case out in `folder` (its working directory) and return the command that runs it."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(DATA / "support", folder, dirs_exist_ok=True)
    source = DATA / case.file
    shutil.copy(source, folder / source.name)
    for target, name in case.files.items():
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / name, folder / target)
    if case.config:
        name, _, snippet = case.config.partition("#")
        text = (DATA / name).read_text(encoding="utf-8")
        (folder / ".dlt").mkdir(exist_ok=True)
        (folder / ".dlt" / "config.toml").write_text(toml_snippet(text, snippet) if snippet else text, encoding="utf-8")
    if tool == "lakeload":
        for path in folder.rglob("*.py"):
            path.write_text(substitute(path.read_text(encoding="utf-8")), encoding="utf-8")
    if case.kind == "snippet":
        (folder / "pytest.ini").write_text("[pytest]\npython_files = *.py\npython_functions = *_snippet test_*\n")
        return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", "-s",
                f"{source.name}::{case.function}"]
    if case.kind == "script":
        return [sys.executable, source.name]
    served = [arg for url, name in case.downloads.items() for arg in ("--serve", f"{url}={DATA / name}")]
    return [sys.executable, str(CELLS), source.name, *map(str, case.cells),
            *(["--raises", case.raises] if case.raises else []), *served]


def case_env(folder: Path, tool: str, overlay: Path | None, engine: Path | None = None) -> dict[str, str]:
    """The case's environment: its own HOME; for lakeload with `engine`, that HOME's `.lakeload/spark` and
    `.lakeload/logs` are the engine folder's, so the cases share one warm engine (each still in its own process)."""
    env = {k: v for k, v in os.environ.items() if k in ENV_KEEP or k.startswith("LC_")}
    home = folder.parent / f"{folder.name}-home"
    home.mkdir(exist_ok=True)
    env.update({"HOME": str(home), "PYTHONPATH": str(folder), "PYTHONDONTWRITEBYTECODE": "1",
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYSPARK_PYTHON": sys.executable})
    if tool == "dlt":
        # dlt keeps pipelines in its data dir (~/.dlt, /var/dlt for root): the case's own, as HOME is
        env.update({"RUNTIME__DLTHUB_TELEMETRY": "false", "DLT_DATA_DIR": str(home / ".dlt")})
        if overlay is not None:
            env["PYTHONPATH"] += os.pathsep + str(overlay)
    elif engine is None:
        env["SPARK__WARM"] = "false"  # no warm engine left behind by a case
    else:
        env["SPARK__WARM"] = "true"  # the first case's Spark is kept as the engine, the next ones attach to it
        (home / ".lakeload").mkdir(exist_ok=True)
        for part in ("spark", "logs"):
            (engine / ".lakeload" / part).mkdir(parents=True, exist_ok=True)
            (home / ".lakeload" / part).symlink_to(engine / ".lakeload" / part)
    return env


@dataclass
class Result:
    returncode: int
    output: str

    @property
    def passed(self) -> bool:
        return self.returncode == 0

    def tail(self, chars: int = 6000) -> str:
        return self.output[-chars:]


def run_case(case: Case, root: Path, tool: str, overlay: Path | None = None, engine: Path | None = None) -> Result:
    """Run `case` with `tool` ("dlt" or "lakeload") in a fresh folder under `root` (lakeload: on the warm engine of
    the folder `engine` when given)."""
    folder = root / f"{tool}-case"
    command = prepare(case, folder, tool)
    try:
        done = subprocess.run(command, cwd=folder, env=case_env(folder, tool, overlay, engine), capture_output=True,
                              text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        partial = [part.decode(errors="replace") if isinstance(part, bytes) else part or "" for part in (exc.stdout, exc.stderr)]
        return Result(-1, f"timed out after {TIMEOUT} s\n" + "".join(partial))
    return Result(done.returncode, done.stdout + done.stderr)


# ------------------------------------------------------------------------------------------ dlt's overlay


def dlt_overlay(cache: Path) -> Path:
    """A folder with sqlglot and duckdb at versions dlt 1.31's dataset relations work with, installed once."""
    target = cache / ("dlt-overlay-" + "-".join(p.replace("==", "") for p in OVERLAY_PINS))
    if not (target / ".complete").exists():
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                        *OVERLAY_PINS], check=True, capture_output=True, timeout=600)
        (target / ".complete").touch()
    return target


@pytest.fixture(scope="session")
def overlay(request: pytest.FixtureRequest) -> Path:
    assert request.config.cache is not None
    return dlt_overlay(Path(request.config.cache.mkdir("dlt_docs")))


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The warm engine the lakeload cases share (`case_env`): the first case's Spark, kept when it exits; stopped,
    with its supervisor, at the end."""
    home = tmp_path_factory.mktemp("engine-home")
    yield home
    env = {**os.environ, "HOME": str(home), "SPARK__WARM": "true"}
    subprocess.run([sys.executable, "-m", "lakeload.cli.main", "spark", "stop"], env=env, capture_output=True,
                   timeout=120, check=False)
    for entry in Path("/proc").iterdir():  # a supervisor that had not ended yet
        with contextlib.suppress(OSError):
            command, environ = (entry / "cmdline").read_bytes(), (entry / "environ").read_bytes()
            if b"lakeload.spark" in command and f"HOME={home}\0".encode() in environ:
                os.kill(int(entry.name), signal.SIGKILL)


# ------------------------------------------------------------------------------------------ tests


def test_the_manifest() -> None:
    """At least 60 cases, each naming an existing file (and function or cells), each passing on dlt; a lakeload
    case is either expected to pass, a known failure with its cause, or a deliberate difference with its text."""
    assert len(CASES) >= 60
    assert len({case.id for case in CASES}) == len(CASES)
    for case in CASES:
        assert case.kind in KINDS and (DATA / case.file).is_file(), case
        assert set(case.needs) <= NEEDS, case
        assert case.dlt == "pass", case
        assert (case.function is not None) == (case.kind == "snippet"), case
        assert bool(case.cells) == (case.kind == "cells"), case
        assert case.raises is None or case.kind == "cells", case
        assert not case.downloads or case.kind == "cells", case
        assert all((DATA / name).is_file() for name in [*case.files.values(), *case.downloads.values()]), case
        assert not (case.known_failure and case.difference), case
        assert bool(case.difference) == bool(case.difference_says), case
        text = (DATA / case.file).read_text(encoding="utf-8")
        assert text.startswith("# Copied from dlt-hub/dlt") and "# commit: " in text, case.file
        if case.function:
            assert re.search(rf"^def {case.function}\(", text, re.M), case
    assert sum(case.fast for case in CASES) >= 40  # the test command runs these (see the module)


# The whole set costs ~5.5 min of the suite's 2 cores (lakeload, on one warm engine) and ~25 min (dlt): the test
# command runs the `fast` cases (52) on lakeload; LAKELOAD_DOCS_SNIPPETS=all runs every case on lakeload, and
# LAKELOAD_DLT_ORACLE=1 runs dlt 1.31 on every case again (its outcome is recorded in cases.toml as dlt = "pass").
ALL_SNIPPETS = os.environ.get("LAKELOAD_DOCS_SNIPPETS") == "all"
DLT_ORACLE = os.environ.get("LAKELOAD_DLT_ORACLE") == "1"


def _params(cases: list[Case], lakeload: bool) -> list[Any]:
    params = []
    for case in cases:
        marks: list[Any] = [] if lakeload and case.fast else [pytest.mark.slow]
        if lakeload and not case.fast and not ALL_SNIPPETS:
            marks.append(pytest.mark.skip(reason="LAKELOAD_DOCS_SNIPPETS=all runs it (the fast cases run always)"))
        if not lakeload and not DLT_ORACLE:
            marks.append(pytest.mark.skip(reason="LAKELOAD_DLT_ORACLE=1 runs dlt 1.31 again (recorded: dlt = pass)"))
        if lakeload and case.known_failure:
            marks.append(pytest.mark.xfail(reason=case.known_failure, strict=True))
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


@pytest.mark.parametrize("case", _params(CASES, lakeload=False))
def test_dlt_passes(case: Case, tmp_path: Path, overlay: Path) -> None:
    """dlt 1.31 passes every case: the oracle (``dlt = "pass"`` in the manifest)."""
    result = run_case(case, tmp_path, "dlt", overlay)
    assert result.passed, f"{case.id} fails on dlt 1.31:\n{result.tail()}"


@pytest.mark.parametrize("case", _params(CASES, lakeload=True))
def test_lakeload_passes(case: Case, tmp_path: Path, engine: Path) -> None:
    """lakeload passes what dlt passes, or fails as the deliberate difference says."""
    result = run_case(case, tmp_path, "lakeload", engine=engine)
    if case.difference:
        assert case.difference_says is not None
        assert not result.passed and case.difference_says in result.output, (
            f"{case.id}: expected lakeload's deliberate difference ({case.difference}) saying "
            f"{case.difference_says!r}\n{result.tail()}")
        return
    assert result.passed, f"{case.id} fails on lakeload:\n{result.tail()}"


if __name__ == "__main__":  # python tests/compat/test_dlt_docs_snippets.py dlt|lakeload CASE_ID [CASE_ID...]
    import tempfile

    tool, wanted = sys.argv[1], sys.argv[2:]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lakeload-tests"
    for case in [c for c in CASES if c.id in wanted or not wanted]:
        with tempfile.TemporaryDirectory() as tmp:
            result = run_case(case, Path(tmp), tool, dlt_overlay(cache) if tool == "dlt" else None)
        print(f"=== {case.id}: {'PASS' if result.passed else 'FAIL'}", flush=True)
        if not result.passed:
            print(result.tail(2500), flush=True)
