"""dlt's `map_nested_values_in_place` (`dlt.common.utils`), which dlt's documentation uses to convert the values
of nested documents (MongoDB's ObjectIds to text, placeholders in configuration) before they are yielded.

>>> map_nested_values_in_place(str.upper, {"a": "x", "b": ["y", ("z",)]})
{'a': 'X', 'b': ['Y', ['Z']]}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["map_nested_values_in_place"]

TNested = TypeVar("TNested")


def map_nested_values_in_place(func: Callable[..., Any], _nested: TNested, *args: Any, **kwargs: Any) -> TNested:
    """Replace every value in the dicts and lists of `_nested` by `func(value, *args, **kwargs)`, in place; a
    named tuple inside becomes a dict and a tuple a list (new containers). ValueError when `_nested` is not a
    dict, list or tuple."""
    nested: Any = _nested
    if isinstance(nested, tuple):
        nested = nested._asdict() if hasattr(nested, "_asdict") else list(nested)
    if isinstance(nested, dict):
        slots: Any = nested.items()
    elif isinstance(nested, list):
        slots = enumerate(nested)
    else:
        raise ValueError(_nested, "Not a nested type")
    for key, value in list(slots):
        if isinstance(value, (dict, list, tuple)):
            nested[key] = map_nested_values_in_place(func, value, *args, **kwargs)
        else:
            nested[key] = func(value, *args, **kwargs)
    result: TNested = nested
    return result
