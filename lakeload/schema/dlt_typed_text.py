"""Executor-safe: dlt's typed text, the way dlt's JSON keeps a datetime, date, time, Decimal or bytes value.

A private-use character (U+F026 onwards) marks the type, the value's text follows: U+F027 and the ISO text for a
datetime, U+F026 and `str()` for a Decimal, U+F02B and base64 for bytes, ... dlt writes its state this way, and its
extracted lines, which its merge-table `_dlt_id` digests hash. Imports only the standard library.

>>> encode(Decimal("1.5")) == DECIMAL + "1.5"
True
"""

from __future__ import annotations

import base64
import datetime as dt
from decimal import Decimal
from typing import Any

PUA = 0xF026  # the first tag; a tag's offset from it is its kind
DECIMAL, DATETIME, DATE, UUID, HEXBYTES, B64BYTES, WEI, TIME = (chr(PUA + i) for i in range(8))


def encode(value: Any) -> str | None:
    """`value` as dlt's typed text; None for a value dlt keeps as plain JSON (or cannot keep)."""
    if isinstance(value, Decimal):
        return DECIMAL + str(value)
    if isinstance(value, dt.datetime):
        return DATETIME + value.isoformat()
    if isinstance(value, dt.date):
        return DATE + value.isoformat()
    if isinstance(value, dt.time):
        return TIME + value.isoformat()
    if isinstance(value, bytes):
        return B64BYTES + base64.b64encode(value).decode("ascii")
    return None
