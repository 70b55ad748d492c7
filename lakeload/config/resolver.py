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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from lakeload.config import known_keys, unknown_keys
from lakeload.config.toml_reader import parse_toml, read_toml_bytes
from lakeload.errors import ConfigFieldMissingError, ConfigurationError

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
    home = os.path.join(os.path.expanduser("~"), ".lakeload")
    if os.path.realpath(home) not in {os.path.realpath(d) for d in dirs}:
        dirs.append(home)
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
    """A configuration file's tables (`ConfigFileError` when malformed); unknown keys are warned about once."""
    data = read_toml_bytes(path)
    tree = parse_toml(path, data)
    unknown_keys.check_file(path, data, tree)
    return tree


def _note(sections: tuple[str, ...], key: str, env: Mapping[str, str]) -> None:
    known_keys.note_lookup(sections, key)
    unknown_keys.check_environment(env)


def read_toml_values(files: list[str], paths: list[tuple[str, ...]]) -> Iterator[tuple[str, tuple[str, ...], Any]]:
    """(file, key path, value) of every key path set in the files, in precedence order."""
    for file in files:
        tree = _read_toml(file)
        for path in paths:
            value = _lookup(tree, path)
            if value is not None:
                yield file, path, value


def _lookup(tree: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = tree
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def flat_text(value: Any) -> str | None:
    """A flat config value as the string a string-only consumer (Spark, delta-rs) wants; None when not flat.

    >>> flat_text(True), flat_text(8), flat_text({"a": 1})
    ('true', '8', None)
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


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


def _coerce(value: str, hint: type | None, source: str) -> Any:
    try:
        return coerce_text(value, hint)
    except ValueError as exc:
        kind = "a JSON object" if hint is dict else "a JSON list" if hint is list else f"a {getattr(hint, '__name__', hint)}"
        raise ConfigurationError(f"{source} = {value!r} is not {kind}: {exc}") from exc


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
    env = os.environ if environ is None else environ
    _note(sections, key, env)
    if explicit is not None:
        return Resolved(explicit, "explicit argument", keys_tried)
    for path in paths:
        name = env_name(path)
        if name in env:
            source = f"environment variable {name}"
            return Resolved(_coerce(env[name], hint, source), source, keys_tried)
    files = toml_files()
    for file, path, value in read_toml_values(files, paths):
        source = f"{file} [{'.'.join(path[:-1])}] {path[-1]}"
        if isinstance(value, str) and hint is not str and hint is not None:
            value = _coerce(value, hint, source)
        return Resolved(value, source, keys_tried, files)
    if required:
        raise ConfigFieldMissingError(".".join(sections), key, keys_tried, files or [os.path.abspath(".lakeload/config.toml")])
    return Resolved(None, None, keys_tried, files)


@dataclass(frozen=True)
class ResolvedSection:
    """A nested section (e.g. credentials) gathered field by field, with the source of every field.

    `native` is a whole-section string that is not a JSON object (e.g. a connection string).
    """

    fields: dict[str, Any]
    sources: dict[str, str]
    native: str | None = None
    native_source: str | None = None
    keys_tried: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)

    @property
    def is_set(self) -> bool:
        return bool(self.fields) or self.native is not None


class _SectionGatherer:
    """Collects fields in precedence order: the first place a field is found wins."""

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        self.native: str | None = None
        self.native_source: str | None = None

    def add_fields(self, values: Mapping[str, Any], source: str) -> None:
        for name, value in values.items():
            if value is not None and name not in self.fields:
                self.fields[name] = value
                self.sources[name] = source

    def add_whole(self, value: Any, source: str) -> None:
        """A whole-section value: a table, a JSON object string, or a native string."""
        from lakeload.config.credentials import parse_json_object

        if isinstance(value, Mapping):
            self.add_fields(value, source)
        elif isinstance(value, str):
            parsed = parse_json_object(value)
            if parsed is not None:
                self.add_fields(parsed, source)
            elif self.native is None:
                self.native, self.native_source = value, source


def resolve_section(
    sections: tuple[str, ...],
    key: str,
    pipeline_name: str | None = None,
    explicit: Any = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedSection:
    """Gather the fields of nested section `key` (e.g. `credentials`) under `sections`.

    An explicit value (dict, dataclass, object with attributes, native or JSON string) wins wholesale.
    Otherwise every field is taken from the first place it is found, in `resolve`'s precedence:
    env vars (`DESTINATION__FILESYSTEM__CREDENTIALS__<FIELD>`, then `DESTINATION__CREDENTIALS__<FIELD>`,
    pipeline-scoped ones first) > secrets.toml > config.toml > ~/.lakeload, and within one provider the
    most specific table (`[destination.filesystem.credentials]` before `[destination.credentials]`).
    A whole-section string (`DESTINATION__FILESYSTEM__CREDENTIALS='{"a": 1}'` or a connection string)
    counts at its own position.

    >>> resolve_section(("destination", "filesystem"), "credentials", "my_pipeline").fields
    {}
    """
    paths = candidate_paths(sections, key, pipeline_name)
    keys_tried = [env_name(p) for p in paths]
    env = os.environ if environ is None else environ
    _note(sections, key, env)
    if explicit is not None:
        from lakeload.config.credentials import Credentials

        creds = Credentials.from_value(explicit, "explicit argument")
        return ResolvedSection(creds.to_dict(), creds.sources, creds.native, creds.native_source, keys_tried)
    gathered = _SectionGatherer()
    for path in paths:
        name = env_name(path)
        if name in env:
            gathered.add_whole(env[name], f"environment variable {name}")
        prefix = name + "__"
        for var in sorted(env):
            field_name = var[len(prefix):]
            if var.startswith(prefix) and field_name and "__" not in field_name:
                gathered.add_fields({field_name.lower(): env[var]}, f"environment variable {var}")
    files = toml_files()
    for file, path, value in read_toml_values(files, paths):
        table = f"[{'.'.join(path)}]" if isinstance(value, Mapping) else f"[{'.'.join(path[:-1])}] {path[-1]}"
        gathered.add_whole(value, f"{file} {table}")
    return ResolvedSection(
        gathered.fields, gathered.sources, gathered.native, gathered.native_source, keys_tried, files
    )
