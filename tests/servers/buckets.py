"""A bucket a test loads into, and what a CLI subprocess needs to reach it (see the `bucket_kind` fixture)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Bucket:
    """Where a test's pipeline loads, and the environment a CLI subprocess needs to reach it."""

    url: str
    credentials: dict[str, str] | None
    env: dict[str, str]

    def destination(self) -> Any:
        import lakeload

        return lakeload.destinations.filesystem(self.url, credentials=self.credentials)
