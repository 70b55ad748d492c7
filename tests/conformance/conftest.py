"""Make ``harness`` importable from the conformance tests whatever pytest's import mode is."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
