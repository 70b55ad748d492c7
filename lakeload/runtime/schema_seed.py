"""What a script tells the pipeline's schema before extract: a `Schema` object (`run(schema=...)`,
`@source(schema=...)`) and `@source(root_key=True)`.

A given `Schema` seeds the stored schema of its name (its tables are merged into the stored one, as dlt merges a
source's schema into the pipeline's); `root_key` is stored in the schema's normalizer config as dlt stores it
(`normalizers.json.config.root_key_propagation`), so normalize adds `_dlt_root_id` to every nested table.

>>> seed_schema(storage, lakeload.Schema("crm"), None)
'crm'
"""

from __future__ import annotations

from typing import Any

from lakeload.extract.source import Source
from lakeload.runtime.packages import PipelineStorage
from lakeload.schema.schema import Schema, merge_schema, set_root_key_propagation


def seed_schema(storage: PipelineStorage, schema: str | Schema | None, data: Any) -> str | None:
    """The schema name `run(schema=...)` (or the source's own `Schema`) asks for, the stored schema updated."""
    source = data if isinstance(data, Source) else None
    if schema is None and source is not None:
        schema = source.schema
    if not isinstance(schema, Schema):
        name = schema
        if source is not None and source.root_key is not None:
            stored = storage.load_schema(name or source.name) or Schema(name or source.name)
            set_root_key_propagation(stored, source.root_key)
            storage.save_schema(stored)
        return name
    loaded = storage.load_schema(schema.name)
    stored = loaded or schema.clone()
    changed = merge_schema(stored, schema) or loaded is None
    if source is not None and source.root_key is not None:
        changed = set_root_key_propagation(stored, source.root_key) or changed
    if changed:
        storage.save_schema(stored)
    return schema.name
