"""Every example of the documentation runs: each ```python block of `docs/**/*.md` and README.md, and each
`lakeload ...` line of a shell block.

One test per page: its blocks run in order in ONE child Python process (`page_runner.py`), in a temporary folder as
working directory with its own HOME, on a real local Spark that lakeload starts itself; a page's blocks build on one
another like a notebook's cells. A block that must not run is marked by the HTML comment
`<!-- docs-test: skip (reason) -->` on a line of its own before it (blank lines between are allowed); `SKIPPED` counts those
marks per page, so a new skip is a decision made here, not a silent one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).resolve().parent / "page_runner.py"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$", re.S | re.M)
SKIP_MARK = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>.+?)\)\s*-->")
SHELLS = {"bash", "sh", "shell", "console"}

# Marked blocks per page (a skip mark with its reason sits right before each). Change only with the mark.
SKIPPED = {
    "README.md": 1,
    "docs/cli.md": 1,
    "docs/dagster.md": 1,
    "docs/design/iceberg-groundwork.md": 2,
    "docs/getting-started.md": 1,
}
# Pages whose examples can take more than ~20 s on a busy machine (Delta and Iceberg commits, two table formats)
SLOW = {"docs/table-formats.md"}


@dataclass(frozen=True)
class Block:
    """One fenced example of a page: `kind` "python" or "shell" (a shell block with `lakeload ...` lines)."""

    where: str
    kind: str
    code: str
    skip: str | None


def rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def page_blocks(page: Path) -> list[Block]:
    """The runnable kinds of fenced blocks of `page`, in order, each with its skip reason (or None)."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        lang, indent = match["lang"], len(match["indent"])
        code = "\n".join(line[indent:] for line in match["body"].splitlines())
        if lang == "python":
            kind = "python"
        elif lang in SHELLS and any(line.strip().removeprefix("$ ").startswith("lakeload ") for line in code.splitlines()):
            kind = "shell"
        else:
            continue
        before = text[: match.start()].rstrip().splitlines()
        mark = SKIP_MARK.fullmatch(before[-1].strip()) if before else None
        line = text[: match.start()].count("\n") + 1
        blocks.append(Block(f"{rel(page)}:{line}", kind, code, mark["reason"] if mark else None))
    return blocks


def skip_marks(page: Path) -> int:
    """The skip marks of `page`: each on a line of its own (one quoted in a sentence is not a mark)."""
    return sum(bool(SKIP_MARK.fullmatch(line.strip())) for line in page.read_text(encoding="utf-8").splitlines())


RUNNABLE = [page for page in PAGES if any(block.skip is None for block in page_blocks(page))]


def test_the_pages_are_found() -> None:
    assert ROOT / "docs" / "index.md" in PAGES and len(RUNNABLE) >= 6, [rel(p) for p in RUNNABLE]


def test_skip_marks_are_counted_and_each_marks_a_block() -> None:
    marks = {rel(page): skip_marks(page) for page in PAGES if skip_marks(page)}
    assert marks == {page: count for page, count in SKIPPED.items() if count}
    # every mark sits right before a python or `lakeload` shell block (else it would skip nothing)
    marked = {rel(page): sum(block.skip is not None for block in page_blocks(page)) for page in PAGES}
    assert {page: count for page, count in marked.items() if count} == {p: c for p, c in SKIPPED.items() if c}


def test_the_readme_example_is_the_getting_started_one() -> None:
    """The README's example is marked skipped because docs/getting-started.md runs the very same code."""
    readme = [b for b in page_blocks(ROOT / "README.md") if b.kind == "python"]
    started = [b for b in page_blocks(ROOT / "docs" / "getting-started.md") if b.kind == "python"]
    assert len(readme) == 1 and readme[0].skip and readme[0].code == started[0].code and started[0].skip is None


def test_the_block_parser() -> None:
    page = ROOT / "docs" / "cli.md"
    kinds = [(b.kind, b.skip is None) for b in page_blocks(page)]
    assert ("shell", True) in kinds and ("shell", False) in kinds


@pytest.mark.parametrize(
    "page", [pytest.param(p, id=rel(p), marks=[pytest.mark.slow] if rel(p) in SLOW else []) for p in RUNNABLE]
)
def test_page_examples_run(page: Path, tmp_path: Path) -> None:
    blocks = [block for block in page_blocks(page) if block.skip is None]
    spec = tmp_path / "blocks.json"
    spec.write_text(json.dumps([{"where": b.where, "kind": b.kind, "code": b.code} for b in blocks]))
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable, "SPARK__WARM": "false",
           "HOME": str(tmp_path / "home")}
    result = subprocess.run([sys.executable, str(RUNNER), str(spec)], cwd=work, env=env, capture_output=True,
                            text=True, timeout=540)
    output = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, f"{rel(page)}: an example failed\n{output}"
    assert output.count("--- ") >= len(blocks), output
