"""The repository stands alone: no code, test, script or doc reaches for a file outside it.

A fresh clone elsewhere must run its tests: no relative path that climbs into a sibling folder of the repository,
no `parents[n]` of `__file__` above the repository root, no absolute path of the machine it was written on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("lakeload", "tests", "bench", "scripts", "docs", "README.md", "mkdocs.yml")
SUFFIXES = {".py", ".sh", ".md", ".toml", ".json", ".txt", ".properties", ".cfg", ".ini", ".yaml", ".yml"}
# written in pieces so that this file does not match its own patterns
OUTSIDE = [
    re.compile(r"\.\./+(?:\.\./+)*" + "shared"),  # the workspace's shared folder, next to the repository
    re.compile(r"(?<![\w/.:~-])/" + "work/"),  # the workspace the project was written in
    re.compile(r"(?<![\w/.:~-])/" + r"root/"),  # its home folder
    re.compile(r"pytest-of-" + r"\w+"),  # a pytest temp folder that leaked into a file
]
PARENTS = re.compile(r"\b__file__\b[^\n]*?\.parents\[(\d+)\]")


def scanned_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        files += [p for p in candidates if p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    return sorted(p for p in files if not _ignored(p))


def _ignored(path: Path) -> bool:
    """Local outputs git ignores (bench results, build folders) are not part of the repository."""
    rel = path.relative_to(ROOT).parts
    return rel[:2] == ("bench", "results") or rel[0] in (".venv", ".tools", "build", "dist")


def reaches_outside(path: Path, line: str) -> bool:
    """Whether `line` of the repository file `path` names a place outside the repository."""
    depth = len(path.relative_to(ROOT).parts) - 1  # Path(__file__).parents[depth] is the repository root
    return any(int(n) > depth for n in PARENTS.findall(line)) or any(p.search(line) for p in OUTSIDE)


def references_outside(path: Path) -> list[str]:
    """`path:line: text` of each reference to a place outside the repository."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for n, line in enumerate(lines, 1) if reaches_outside(path, line)]


def test_no_reference_outside_the_repository() -> None:
    files = scanned_files()
    assert len(files) > 100 and ROOT / "README.md" in files and ROOT / "docs" / "index.md" in files
    assert [ref for path in files for ref in references_outside(path)] == []


@pytest.mark.parametrize("line", [
    'CASES = Path(__file__).resolve().parents[' + '3] / "shared" / "conformance"',
    'see ``/' + 'work/shared/conformance/README.md``',
    'open("../../' + 'shared/cases/01.json")',
    'HOME = "/' + 'root/.lakeload"',
])
def test_the_scan_finds_escapes(line: str) -> None:
    probe = ROOT / "tests" / "conformance" / "test_conformance.py"  # depth 2: parents[3] is outside
    assert reaches_outside(probe, line)


def test_in_repository_references_are_fine() -> None:
    probe = ROOT / "tests" / "conformance" / "test_conformance.py"
    for line in ('CASES_DIR = Path(__file__).resolve().parent / "cases"', "ROOT = Path(__file__).resolve().parents[" + "2]",
                 '"s3://bucket/' + 'work/p1"', "/mnt/shared/lakeload", "/home/me/.lakeload/pipelines/p"):
        assert not reaches_outside(probe, line), line
