"""Make `bucket_utils` importable from the e2e tests whatever pytest's import mode is."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
