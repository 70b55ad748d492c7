"""A DB-API-like cursor over one DuckDB query, streaming through an Arrow record batch reader.

Every retrieval method takes rows from the same stream, so `fetchone()` followed by `df()` gives the first
row and then a DataFrame of the rest, as with dlt's cursors.

>>> import duckdb
>>> con = duckdb.connect()
>>> cursor = Cursor(con.cursor(), "SELECT range AS x FROM range(5)", None)
>>> cursor.fetchone(), cursor.fetchmany(2), [len(c) for c in cursor.iter_fetch(1)]
((0,), [(1,), (2,)], [1, 1])
>>> cursor.close()
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb
import pyarrow as pa

from lakeload.sql.errors import InvalidArgumentError, SqlQueryError

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_BATCH_SIZE = 10_000
_T = TypeVar("_T")


def table_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """The rows of an Arrow table as tuples. Example: `table_rows(pa.table({"a": [1]}))` -> `[(1,)]`."""
    if table.num_columns == 0:
        return [() for _ in range(table.num_rows)]
    return list(zip(*(column.to_pylist() for column in table.columns), strict=True))


class Cursor:
    """The result of `execute_query`: tuples, pandas or Arrow, all at once or in chunks.

    Example (after a run loaded `users`)::

        with pipeline.sql_client() as client, client.execute_query("SELECT * FROM users") as cursor:
            first = cursor.fetchone()
            for chunk in cursor.iter_arrow(1000):
                ...
    """

    def __init__(self, connection: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None,
                 on_error: Callable[[str, Exception], Exception] | None = None) -> None:
        self.sql = sql
        self._connection = connection
        self._on_error = on_error or (lambda sql, exc: SqlQueryError(sql, f"{type(exc).__name__}: {exc}"))
        self._relation = self._guard(lambda: connection.sql(sql, params=params or None))
        self._reader: pa.RecordBatchReader | None = None
        self._pending: pa.Table | None = None
        self._exhausted = self._relation is None

    def _guard(self, action: Callable[[], _T]) -> _T:
        try:
            return action()
        except duckdb.Error as exc:
            raise self._on_error(self.sql, exc) from exc

    # -- metadata ---------------------------------------------------------------------------------
    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        """DB-API description: one `(name, type, None, ...)` per column; None for statements without rows."""
        return None if self._relation is None else list(self._relation.description)

    @property
    def columns(self) -> list[str]:
        """Column names of the result (empty for statements without rows)."""
        return [] if self._relation is None else list(self._relation.columns)

    @property
    def native_cursor(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection (a cursor of the client's database) that runs this query."""
        return self._connection

    # -- the stream ---------------------------------------------------------------------------------
    def _open(self, batch_size: int) -> pa.RecordBatchReader | None:
        if self._reader is None and self._relation is not None:
            relation = self._relation
            self._reader = self._guard(lambda: relation.to_arrow_reader(batch_size))
        return self._reader

    def _schema(self) -> pa.Schema:
        reader = self._open(DEFAULT_BATCH_SIZE)
        return reader.schema if reader is not None else pa.schema([])

    def _take(self, size: int | None, batch_size: int = DEFAULT_BATCH_SIZE) -> pa.Table:
        """Up to `size` more rows (all the rest when None) as one Arrow table."""
        reader = self._open(batch_size if size is None else max(1, min(size, batch_size)))
        if reader is None:
            return pa.table({})
        parts: list[pa.Table] = [self._pending] if self._pending is not None else []
        have = sum(p.num_rows for p in parts)
        while not self._exhausted and (size is None or have < size):
            try:
                batch = self._guard(reader.read_next_batch)
            except StopIteration:
                self._exhausted = True
                break
            parts.append(pa.Table.from_batches([batch]))
            have += batch.num_rows
        table = pa.concat_tables(parts) if parts else reader.schema.empty_table()
        if size is not None and table.num_rows > size:
            self._pending = table.slice(size)
            return table.slice(0, size)
        self._pending = None
        return table

    def _done(self) -> bool:
        return self._exhausted and (self._pending is None or self._pending.num_rows == 0)

    # -- tuples -------------------------------------------------------------------------------------
    def fetchall(self) -> list[tuple[Any, ...]]:
        """All remaining rows as tuples."""
        return table_rows(self._take(None))

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row, or None when there are no more."""
        rows = table_rows(self._take(1))
        return rows[0] if rows else None

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        """The next `size` rows (all remaining rows when `size` is None)."""
        return table_rows(self._take(size))

    def iter_fetch(self, chunk_size: int) -> Iterator[list[tuple[Any, ...]]]:
        """Lists of at most `chunk_size` tuples until the result is used up."""
        for table in self.iter_arrow(chunk_size):
            yield table_rows(table)

    # -- Arrow and pandas ---------------------------------------------------------------------------
    def arrow(self, chunk_size: int | None = None, **kwargs: Any) -> pa.Table | None:
        """The remaining rows as an Arrow table; with `chunk_size`, the next chunk only (None when used up)."""
        if chunk_size is None:
            return self._take(None)
        return next(self.iter_arrow(chunk_size), None)

    def df(self, chunk_size: int | None = None, **kwargs: Any) -> pd.DataFrame | None:
        """The remaining rows as a pandas DataFrame; with `chunk_size`, the next chunk only (None when used up)."""
        table = self.arrow(chunk_size)
        return None if table is None else table.to_pandas(**kwargs)

    def iter_arrow(self, chunk_size: int) -> Iterator[pa.Table]:
        """Arrow tables of at most `chunk_size` rows, read batch by batch (never the whole result at once)."""
        if chunk_size < 1:
            raise InvalidArgumentError(f"chunk_size must be at least 1, got {chunk_size}")
        while not self._done():
            table = self._take(chunk_size, batch_size=chunk_size)
            if table.num_rows == 0 and self._done():
                return
            yield table

    def iter_df(self, chunk_size: int) -> Iterator[pd.DataFrame]:
        """pandas DataFrames of at most `chunk_size` rows."""
        for table in self.iter_arrow(chunk_size):
            yield table.to_pandas()

    # -- lifetime -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Drop the stream and the DuckDB cursor."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self._pending = None
        self._exhausted = True
        self._connection.close()

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
