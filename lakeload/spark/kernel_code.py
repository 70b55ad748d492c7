"""The one door to Spark's Python workers checks what goes through it: only functions of the executor-safe
kernel (`lakeload.kernel`), which import nothing driver-side, are sent to executors (`session.run_tasks`,
`pandas_warning.map_in_arrow`). A function defined anywhere else would drag its module's driver-side imports
into every worker, or fail there.

>>> from lakeload.kernel.load.copy import copy_files
>>> payload = None   # a CopyPayload
>>> require_kernel(functools.partial(copy_files, payload))   # lakeload.kernel.load.copy: passes
>>> require_kernel(lambda batches: batches)
Traceback (most recent call last):
TypeError: ...
"""

from __future__ import annotations

import functools
from typing import Any

KERNEL = "lakeload.kernel."


def require_kernel(func: Any) -> None:
    """Raise `TypeError` unless `func` (or the function a `functools.partial` wraps) is defined in the kernel."""
    target = func
    while isinstance(target, functools.partial):
        target = target.func
    module = getattr(target, "__module__", None) or ""
    if not module.startswith(KERNEL):
        name = getattr(target, "__qualname__", repr(target))
        raise TypeError(
            f"{name} (module {module or 'unknown'}) is not executor code: only functions of {KERNEL.rstrip('.')} "
            "run in Spark's Python workers. Move it there (it may import only the kernel, schema, common, errors)."
        )
