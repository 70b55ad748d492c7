"""Executor-safe: what lakeload is and where it lives, for the modules below the package root.

The root package re-exports `__version__`; modules in lower layers (the Spark session's Python daemon, the
zip shipped to a Connect session) read these without importing the root package and everything it exports.

>>> VERSION
'0.1.0'
"""

from __future__ import annotations

import os

VERSION = "0.1.0"
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))  # the `lakeload` package folder this process imported
