"""PySpark's py4j converters of numpy values, without the module they import to learn whether numpy exists.

PySpark registers two py4j input converters, for numpy arrays and numpy scalars. py4j asks every registered
converter about every argument of every call into the JVM, and each of the two answers by first importing
`pyspark.testing.utils` to read its `have_numpy` flag. That module imports pandas, checks its version
(PySpark's pandas >= 3 warning) and looks for test-only packages: ~0.45 s on the first call of a process,
which is the SparkContext's start, on the driver's path of every run that starts Spark.

`lighten_converters()` puts subclasses in their place that ask only whether the object is a numpy array
(one-dimensional) or a numpy scalar. Such an object exists only once numpy is imported, so they answer
exactly as PySpark's do, and convert the same way (PySpark's own `convert`).

>>> lighten_converters()
>>> from py4j.protocol import INPUT_CONVERTER
>>> sum(isinstance(c, (_Arrays, _Scalars)) for c in INPUT_CONVERTER)
2
"""

from __future__ import annotations

import sys
from typing import Any

from pyspark.sql.types import NumpyArrayConverter, NumpyScalarConverter


class _Arrays(NumpyArrayConverter):
    def can_convert(self, obj: Any) -> bool:
        numpy = sys.modules.get("numpy")
        return numpy is not None and isinstance(obj, numpy.ndarray) and obj.ndim == 1


class _Scalars(NumpyScalarConverter):
    def can_convert(self, obj: Any) -> bool:
        numpy = sys.modules.get("numpy")
        return numpy is not None and isinstance(obj, numpy.generic)


def lighten_converters() -> None:
    """Replace PySpark's numpy converters in py4j's list by ones that import nothing (in place, idempotent)."""
    from py4j.protocol import INPUT_CONVERTER

    for index, converter in enumerate(INPUT_CONVERTER):
        if type(converter) is NumpyArrayConverter:
            INPUT_CONVERTER[index] = _Arrays()
        elif type(converter) is NumpyScalarConverter:
            INPUT_CONVERTER[index] = _Scalars()
