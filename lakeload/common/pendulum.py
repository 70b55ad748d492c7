"""dlt's `dlt.common.pendulum`: the `pendulum` module itself, with the local timezone set to UTC.

dlt sets pendulum's local timezone to UTC when it is imported, so `pendulum.now()` and `pendulum.today()` in a
dlt script are UTC whatever the machine's zone; importing this module (or `pendulum` from `lakeload.common`) does
the same. `from lakeload.common import pendulum` gives the real `pendulum` module, as `from dlt.common import
pendulum` does. Also here as in dlt: the standard library's `datetime`, `timezone`, `timedelta`, `tzinfo`.

>>> from lakeload.common.pendulum import pendulum
>>> pendulum.now().timezone_name
'UTC'
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo

import pendulum
from pendulum import UTC, FixedTimezone, Timezone

__all__ = ["UTC", "FixedTimezone", "Timezone", "datetime", "pendulum", "timedelta", "timezone", "tzinfo"]

pendulum.set_local_timezone(UTC)
