"""Reading a pipeline's dataset back: `pipeline.sql_client()` and `pipeline.dataset()` (DuckDB, no Spark needed).

Example (after a run loaded `users`)::

    with pipeline.sql_client() as client:
        rows = client.execute_sql("SELECT count(*) FROM users")
    pipeline.dataset().users.df()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeload.destinations.impl.filesystem.client import FilesystemClient
from lakeload.runtime.pipeline_settings import PipelineSettings
from lakeload.schema.schema import Schema

if TYPE_CHECKING:
    from lakeload.sql.client import FilesystemSqlClient
    from lakeload.sql.dataset import Dataset


class DatasetAccess(PipelineSettings):
    """The read side of `Pipeline`: SQL and relations over the tables the pipeline loaded."""

    def sync_destination(self) -> None:  # pragma: no cover - Pipeline's
        raise NotImplementedError

    def schema(self, name: str | None = None) -> Schema:  # pragma: no cover - Pipeline's
        raise NotImplementedError

    def sql_client(self, schema: str | None = None) -> FilesystemSqlClient:
        """SQL over the dataset through DuckDB views, like dlt's filesystem `sql_client()`.

        Example (after a run loaded `users`)::

            with pipeline.sql_client() as client:
                rows = client.execute_sql("SELECT count(*) FROM users WHERE id > %s", 1)
        """
        from lakeload.sql.client import FilesystemSqlClient

        config = self._configuration()
        self.sync_destination()
        client = FilesystemClient(config, self.dataset_name)
        return FilesystemSqlClient(client, self.schema(schema), self._layout(config), config.always_refresh_views)

    def dataset(self, schema: str | None = None) -> Dataset:
        """The dataset's tables as relations: `ds.users.df()`, `ds.row_counts()`, `ds("SELECT ...")`, `.spark()`."""
        from lakeload.sql.dataset import Dataset

        return Dataset(self.sql_client(schema))
