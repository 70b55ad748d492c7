"""Make `interop_buckets` (and the conformance `harness` it uses for dlt's config isolation) importable."""

import sys
from pathlib import Path

for _dir in (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "conformance"):
    if str(_dir) not in sys.path:
        sys.path.insert(0, str(_dir))

import pytest  # noqa: E402

pytest.register_assert_rewrite("interop_buckets", "harness")
