"""What a script tells the pipeline's schema before extract: a `Schema` object (`run(schema=...)`,
`@source(schema=...)`), `@source(root_key=True)` and `@source(max_table_nesting=...)`.

A given `Schema` seeds the stored schema of its name (its tables are merged into the stored one, as dlt merges a
source's schema into the pipeline's); `root_key` is stored in the schema's normalizer config as dlt stores it
(`normalizers.json.config.root_key_propagation`), so normalize adds `_dlt_root_id` to every nested table;
so is a source's `max_table_nesting` (`normalizers.json.config.max_nesting`: the limit of its tables that have
none of their own; a source without it removes it, as dlt's pipeline schema takes the source's normalizer config).

>>> import tempfile
>>> from lakeload.storage.working import pipeline_storage
>>> tmp = tempfile.TemporaryDirectory()
>>> storage = pipeline_storage(tmp.name, "quick_start")
>>> given = Schema("crm")
>>> given.update_table({"name": "users", "columns": {"id": {"name": "id", "data_type": "bigint"}}})
>>> seed_schema(storage, given, None)
'crm'
>>> storage.load_schema("crm").data_table_names()
['users']
"""

from __future__ import annotations

from typing import Any

from lakeload.extract.source import Source
from lakeload.schema.schema import Schema, merge_schema, set_max_nesting, set_root_key_propagation
from lakeload.storage.packages import PipelineStorage


def seed_schema(storage: PipelineStorage, schema: str | Schema | None, data: Any) -> str | None:
    """The schema name `run(schema=...)` (or the source's own `Schema`) asks for, the stored schema updated."""
    source = data if isinstance(data, Source) else None
    if schema is None and source is not None:
        schema = source.schema
    if not isinstance(schema, Schema):
        name = schema
        if source is not None:
            stored = storage.stored_or_new_schema(name or source.name)
            if _source_settings(stored, source):
                storage.save_schema(stored)
        return name
    loaded = storage.load_schema(schema.name)
    stored = loaded or schema.clone()
    changed = merge_schema(stored, schema) or loaded is None
    if source is not None:
        changed = _source_settings(stored, source) or changed
    if changed:
        storage.save_schema(stored)
    return schema.name


def _source_settings(stored: Schema, source: Source) -> bool:
    """The source's `root_key` (when given) and `max_table_nesting` in `stored`; True when it changed."""
    changed = source.root_key is not None and set_root_key_propagation(stored, source.root_key)
    return set_max_nesting(stored, source.max_table_nesting) or changed
