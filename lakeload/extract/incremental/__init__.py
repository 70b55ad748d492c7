"""Incremental loading, as dlt's `dlt.sources.incremental` (see `incremental.py` for the behaviour).

>>> from lakeload.extract.incremental import Incremental
>>> cursor: Incremental[int] = Incremental("id", initial_value=0)
"""

from lakeload.extract.incremental.incremental import Incremental, IncrementalState, TCursorValue

__all__ = ["Incremental", "IncrementalState", "TCursorValue"]
