"""The `sources.*` part of `lakeload config show`: values for source and resource arguments, with their origin.

Source arguments are user-defined, so every value set under `[sources]` (and `[<pipeline>.sources]`) in the
TOML files, set in code (`lakeload.config[...] = v`), or in a `SOURCES__...` (`<PIPELINE>__SOURCES__...`)
environment variable is listed, the one that wins for each key first; then the arguments injected in this
process, under the key of the argument and with the place they were found. Secrets are masked: values in
secrets.toml or set through `lakeload.secrets`, injected `lakeload.secrets.value` arguments, and keys that look
secret (`api_key`, `token`, `password`, ...).

>>> lines = [str(line) for line in source_lines(None, environ={"SOURCES__CRM__API_KEY": "k", "SOURCES__CRM__PAGE_SIZE": "5"})]
>>> lines[:2]   # the values set; after them, the arguments this process injected so far
['sources.crm.api_key = ***  (environment variable SOURCES__CRM__API_KEY)', 'sources.crm.page_size = 5  (environment variable SOURCES__CRM__PAGE_SIZE)']
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from lakeload.config.credentials import MASK, is_secret_key, mask_value, url_without_password
from lakeload.config.inject import injected
from lakeload.config.lines import ConfigLine
from lakeload.config.resolver import documents

SOURCES = "sources"


def _leaves(node: Mapping[str, Any], path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, value in node.items():
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, (*path, str(name)))
        else:
            yield (*path, str(name)), value


def _shown(path: tuple[str, ...], value: Any, secret: bool) -> Any:
    if secret or any(is_secret_key(part) for part in path[2:]):
        return MASK
    if isinstance(value, str):
        return url_without_password(value)
    return mask_value(path[-1], value)


def _env_values(prefixes: list[tuple[str, ...]], env: Mapping[str, str]) -> Iterator[tuple[tuple[str, ...], str, str]]:
    heads = {"__".join(p.upper() for p in prefix) + "__": prefix for prefix in prefixes}
    for var in sorted(env):
        for head, prefix in heads.items():
            rest = var[len(head):]
            if var.startswith(head) and rest and all(rest.split("__")):
                yield (*prefix, *rest.lower().split("__")), env[var], var


def source_lines(pipeline_name: str | None, environ: Mapping[str, str] | None = None) -> list[ConfigLine]:
    """Every `sources.*` value set (in precedence order per key), then the source arguments injected so far."""
    env = os.environ if environ is None else environ
    prefixes: list[tuple[str, ...]] = [(pipeline_name, SOURCES)] if pipeline_name else []
    prefixes.append((SOURCES,))
    secret_keys = {value.key for value in injected() if value.secret}
    lines: dict[str, ConfigLine] = {}
    for path, value, var in _env_values(prefixes, env):
        key = ".".join(path)
        lines.setdefault(key, ConfigLine(key, _shown(path, value, key in secret_keys), f"environment variable {var}"))
    for doc in documents():
        for prefix in prefixes:
            node: Any = doc.tree
            for part in prefix:
                node = node.get(part) if isinstance(node, Mapping) else None
            if not isinstance(node, Mapping):
                continue
            for path, value in _leaves(node, prefix):
                key = ".".join(path)
                shown = _shown(path, value, doc.secrets or key in secret_keys)
                lines.setdefault(key, ConfigLine(key, shown, doc.where(path)))
    out = sorted(lines.values(), key=lambda line: line.key)
    out += [ConfigLine(value.key, value.value, value.source, note="injected") for value in injected()]
    return out
