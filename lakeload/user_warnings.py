"""Warnings that point at the user's line: the first frame outside the lakeload package.

>>> warn_user("Falling back to 'append' on 'orders'")
"""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_level() -> int:
    """The `stacklevel` (as `warnings.warn` counts from its caller's caller) of the first frame outside lakeload."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn(message)` attributed to the user's code that called into lakeload."""
    warnings.warn(message, category, stacklevel=caller_level())
