"""PySpark's numpy converters, replaced by ones that import nothing, still carry numpy values into the JVM."""

from __future__ import annotations

import numpy as np
from py4j.protocol import INPUT_CONVERTER
from pyspark.sql import SparkSession
from pyspark.sql.types import NumpyArrayConverter, NumpyScalarConverter

from lakeload.spark.py4j_numpy import lighten_converters


def test_numpy_arrays_and_scalars_reach_the_jvm_as_before(spark: SparkSession) -> None:
    lighten_converters()
    lighten_converters()  # idempotent
    kinds = [type(c) for c in INPUT_CONVERTER]
    assert NumpyArrayConverter not in kinds and NumpyScalarConverter not in kinds
    assert sum(issubclass(k, (NumpyArrayConverter, NumpyScalarConverter)) for k in kinds) == 2
    jvm = spark.sparkContext._jvm
    assert jvm.java.util.Arrays.toString(np.array([1, 2, 3], dtype=np.int64)) == "[1, 2, 3]"
    assert jvm.java.util.Arrays.toString(np.array([1.5, 2.0])) == "[1.5, 2.0]"
    assert jvm.java.lang.String.valueOf(np.int64(7)) == "7"
    assert jvm.java.lang.String.valueOf(np.bool_(True)) == "true"
    assert jvm.java.lang.String.valueOf([1, 2]) == "[1, 2]"  # a list: py4j's own converter, as before
