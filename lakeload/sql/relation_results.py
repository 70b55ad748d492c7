"""What a relation gives back when rows are asked for: pandas, Arrow, tuples, chunks, a scalar, a row count.

`RelationResults` is the part of `lakeload.sql.relation.Relation` that runs its query: DuckDB executes the SQL of
`_statement()` through the dataset's SQL client, and nothing passes through Python before these methods.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from sqlglot import exp

from lakeload.schema.schema import Schema
from lakeload.sql import relation_sql as rs
from lakeload.sql.clients import SqlClient
from lakeload.sql.errors import InvalidArgumentError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa



class DatasetLike(Protocol):
    """What a relation needs of its dataset (`lakeload.sql.dataset.Dataset`)."""

    sql_client: SqlClient
    ibis_queries: dict[str, str]

    @property
    def schema(self) -> Schema: ...

    @property
    def dataset_name(self) -> str: ...


class RelationResults:
    """The fetching methods of a relation (dlt's names and arguments)."""

    _dataset: DatasetLike
    _params: dict[str, Any]

    def _statement(self) -> tuple[str, list[Any]]:
        raise NotImplementedError

    def _tree(self) -> exp.Query:
        raise NotImplementedError

    def _run(self, method: str, *args: Any) -> Any:
        sql, values = self._statement()
        with self._dataset.sql_client.execute_query(sql, *values) as cursor:
            return getattr(cursor, method)(*args)

    def df(self, chunk_size: int | None = None) -> pd.DataFrame | None:
        """All rows as a pandas DataFrame (with `chunk_size`, the first chunk only)."""
        return self._run("df", chunk_size)

    def arrow(self, chunk_size: int | None = None) -> pa.Table | None:
        """All rows as an Arrow table (with `chunk_size`, the first chunk only)."""
        return self._run("arrow", chunk_size)

    def fetchall(self) -> list[tuple[Any, ...]]:
        """All rows as tuples."""
        return self._run("fetchall")  # type: ignore[no-any-return]

    def fetchone(self) -> tuple[Any, ...] | None:
        """The first row, or None."""
        return self._run("fetchone")  # type: ignore[no-any-return]

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        """The first `size` rows."""
        return self._run("fetchmany", size)  # type: ignore[no-any-return]

    def fetchscalar(self) -> Any:
        """The one value of a one-row, one-column result (None when there is no row), as dlt's `fetchscalar`."""
        rows = self.fetchmany(2)
        if not rows:
            return None
        if len(rows) != 1 or len(rows[0]) != 1:
            raise InvalidArgumentError(f"fetchscalar() needs one row of one column; the result has "
                                       f"{'more than one row' if len(rows) > 1 else f'{len(rows[0])} columns'}")
        return rows[0][0]

    def _iter(self, method: str, chunk_size: int) -> Iterator[Any]:
        sql, values = self._statement()
        with self._dataset.sql_client.execute_query(sql, *values) as cursor:
            yield from getattr(cursor, method)(chunk_size)

    def iter_fetch(self, chunk_size: int) -> Iterator[list[tuple[Any, ...]]]:
        """Lists of at most `chunk_size` tuples."""
        return self._iter("iter_fetch", chunk_size)

    def iter_df(self, chunk_size: int) -> Iterator[pd.DataFrame]:
        """pandas DataFrames of at most `chunk_size` rows."""
        return self._iter("iter_df", chunk_size)

    def iter_arrow(self, chunk_size: int) -> Iterator[pa.Table]:
        """Arrow tables of at most `chunk_size` rows."""
        return self._iter("iter_arrow", chunk_size)

    def row_count(self) -> int:
        """Number of rows, counted by DuckDB. Example: `ds.users.row_count()` -> `8`."""
        count = exp.select(exp.Count(this=exp.Star())).from_(rs.derived(self._tree().copy(), "_c"))
        sql, values = rs.bind(count.sql(dialect=rs.DIALECT), self._params)
        with self._dataset.sql_client.execute_query(sql, *values) as cursor:
            row = cursor.fetchone()
        return int(row[0]) if row else 0
