"""Shipping user functions (sink functions, layout callbacks) to Spark executors.

Spark pickles functions with cloudpickle: module-level functions by reference (the module must be
importable on executors), lambdas and closures by value. Functions from scripts or test modules
are not importable there, so their modules are registered to be pickled by value as well.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def ship_by_value(func: Callable[..., Any]) -> None:
    """Make `func` travel whole to executors when its module is not an installed package."""
    module = sys.modules.get(getattr(func, "__module__", "") or "")
    if module is None or module.__name__ == "__main__":
        return  # cloudpickle already ships __main__ functions by value
    location = getattr(module, "__file__", "") or ""
    if "site-packages" in location or module.__name__.split(".")[0] == "lakeload":
        return
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(module)


def dumps_for_executors(value: object) -> bytes:
    """Pickle `value` as Spark will, registering a function's module for by-value shipping first."""
    from pyspark import cloudpickle

    if callable(value):
        ship_by_value(value)
    return bytes(cloudpickle.dumps(value))
