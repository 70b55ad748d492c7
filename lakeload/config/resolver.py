"""One place that turns explicit arguments, environment variables and TOML files into values.

Precedence, highest first: explicit argument > environment variable > `.lakeload/secrets.toml` >
`.lakeload/config.toml` > `~/.lakeload/secrets.toml` > `~/.lakeload/config.toml`. Within each
provider, keys are tried from the most specific to the least, as dlt does: pipeline-scoped first
(`<PIPELINE>__DESTINATION__FILESYSTEM__BUCKET_URL`), then with fewer sections
(`DESTINATION__BUCKET_URL`, `BUCKET_URL`). A project with `.dlt/` and no `.lakeload/` is read too.

>>> resolve(("destination", "filesystem"), "bucket_url", pipeline_name="quick_start").value
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from lakeload.errors import ConfigFieldMissingError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

logger = logging.getLogger("lakeload.config")
_warned_dlt = False


@dataclass(frozen=True)
class Resolved:
    """A resolved value, where it came from, and every key that was looked up."""

    value: Any
    source: str | None
    keys_tried: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)


def candidate_paths(sections: tuple[str, ...], key: str, pipeline_name: str | None) -> list[tuple[str, ...]]:
    """Key paths from most to least specific, pipeline-scoped ones first."""
    paths = []
    prefixes: list[tuple[str, ...]] = [(pipeline_name,)] if pipeline_name else []
    prefixes.append(())
    for prefix in prefixes:
        for cut in range(len(sections), -1, -1):
            paths.append((*prefix, *sections[:cut], key))
    return paths


def env_name(path: tuple[str, ...]) -> str:
    return "__".join(p.upper() for p in path)


def _config_dirs() -> list[str]:
    global _warned_dlt
    project = os.path.abspath(".lakeload")
    dirs = []
    if os.path.isdir(project):
        dirs.append(project)
    elif os.path.isdir(os.path.abspath(".dlt")):
        if not _warned_dlt:
            logger.warning("No .lakeload/ folder here; reading configuration from .dlt/ instead.")
            _warned_dlt = True
        dirs.append(os.path.abspath(".dlt"))
    dirs.append(os.path.join(os.path.expanduser("~"), ".lakeload"))
    return dirs


def toml_files() -> list[str]:
    """TOML files in precedence order (existing ones only)."""
    files = []
    for folder in _config_dirs():
        for name in ("secrets.toml", "config.toml"):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                files.append(path)
    return files


def _read_toml(path: str) -> dict[str, Any]:
    with open(path, "rb") as f:
        return tomllib.load(f)


def _lookup(tree: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = tree
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def coerce_text(value: str, hint: type | None) -> Any:
    """Parse an environment string into the expected type (bool, int, float, dict/list as JSON)."""
    if hint is bool:
        return value.strip().lower() in ("1", "true", "yes", "on")
    if hint is int:
        return int(value)
    if hint is float:
        return float(value)
    if hint in (dict, list):
        return orjson.loads(value)
    return value


def resolve(
    sections: tuple[str, ...],
    key: str,
    pipeline_name: str | None = None,
    explicit: Any = None,
    hint: type | None = None,
    required: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Resolved:
    """Resolve one value; raises `ConfigFieldMissingError` listing every key tried when required."""
    paths = candidate_paths(sections, key, pipeline_name)
    keys_tried = [env_name(p) for p in paths]
    if explicit is not None:
        return Resolved(explicit, "explicit argument", keys_tried)
    env = os.environ if environ is None else environ
    for path in paths:
        name = env_name(path)
        if name in env:
            return Resolved(coerce_text(env[name], hint), f"environment variable {name}", keys_tried)
    files = toml_files()
    for file in files:
        tree = _read_toml(file)
        for path in paths:
            value = _lookup(tree, path)
            if value is not None:
                if isinstance(value, str) and hint is not str and hint is not None:
                    value = coerce_text(value, hint)
                return Resolved(value, f"{file} [{'.'.join(path[:-1])}] {path[-1]}", keys_tried, files)
    if required:
        raise ConfigFieldMissingError(".".join(sections), key, keys_tried, files or [os.path.abspath(".lakeload/config.toml")])
    return Resolved(None, None, keys_tried, files)
