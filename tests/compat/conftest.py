"""Make ``compat_harness`` (and the conformance ``harness`` it builds on) importable from the compat tests."""

import sys
from pathlib import Path

for _dir in (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "conformance"):
    if str(_dir) not in sys.path:
        sys.path.insert(0, str(_dir))

import pytest  # noqa: E402

pytest.register_assert_rewrite("compat_harness", "compat_dataset", "harness")
