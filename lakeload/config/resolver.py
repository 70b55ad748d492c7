"""One place that turns explicit arguments, environment variables and TOML files into values.

Precedence, highest first: explicit argument > environment variable > values set in code with
`lakeload.secrets[...] = v` > `.lakeload/secrets.toml` > values set with `lakeload.config[...] = v` >
`.lakeload/config.toml` > `~/.lakeload/secrets.toml` > `~/.lakeload/config.toml` > the providers registered with
`lakeload.config.register_provider(...)`, in the order registered (`lakeload.config.providers`). Keys are tried from the
most specific to the least, as dlt does: when a pipeline name is given, the pipeline-scoped keys
(`<PIPELINE>__DESTINATION__FILESYSTEM__BUCKET_URL`, `[<pipeline>.destination.filesystem]`) in every provider
first, then the others, each with fewer sections in turn (`DESTINATION__BUCKET_URL`, `BUCKET_URL`). Under
`sources.<section>.<name>` (source and resource arguments) `sources.<name>` is tried right after
`sources.<section>`, as dlt's compact layout. A project with `.dlt/` and no `.lakeload/` is read too.

>>> resolve(("destination", "filesystem"), "bucket_url", pipeline_name="quick_start").value
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from lakeload.config import known_keys, memory, providers, unknown_keys
from lakeload.config.coercion import coerce_text, coerce_value, flat_text  # noqa: F401  (flat_text, coerce_text: re-exported)
from lakeload.config.open_types import ConfigTree, CredentialFields
from lakeload.config.toml_reader import parse_toml, read_toml_bytes
from lakeload.errors import ConfigFieldMissingError, ConfigValueNotSecretError

logger = logging.getLogger("lakeload.config")
_warned_dlt = False


@dataclass(frozen=True)
class Resolved:
    """A resolved value, where it came from, and every key that was looked up."""

    value: Any
    source: str | None
    keys_tried: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    path: tuple[str, ...] | None = None  # the key path the value was found at
    from_secrets: bool = False  # found in secrets.toml or set through `lakeload.secrets`


def candidate_paths(
    sections: tuple[str, ...], key: str, pipeline_name: str | None, config_section: str | None = None
) -> list[tuple[str, ...]]:
    """Key paths from most to least specific, pipeline-scoped ones first. A `config_section` (dlt's `__section__`
    of a settings class, e.g. `data_writer`) stays after whatever sections remain.

    >>> [".".join(p) for p in candidate_paths(("sources", "crm", "contacts"), "api_key", None)]
    ['sources.crm.contacts.api_key', 'sources.crm.api_key', 'sources.contacts.api_key', 'sources.api_key', 'api_key']
    >>> [".".join(p) for p in candidate_paths(("normalize",), "file_max_items", None, "data_writer")]
    ['normalize.data_writer.file_max_items', 'data_writer.file_max_items']
    """
    return [path for group in _path_groups(sections, key, pipeline_name, config_section) for path in group]


def _path_groups(
    sections: tuple[str, ...], key: str, pipeline_name: str | None, config_section: str | None = None
) -> list[list[tuple[str, ...]]]:
    """The candidate paths in dlt's order: pipeline-scoped ones (looked up in every provider first), then the rest."""
    tail = (config_section, key) if config_section else (key,)
    unscoped = [(*sections[:cut], *tail) for cut in range(len(sections), -1, -1)]
    if len(sections) == 3 and sections[0] == "sources" and sections[1] != sections[2]:
        unscoped.insert(2, (sections[0], sections[2], *tail))  # dlt's compact layout: sources.<name>.<key>
    groups = [unscoped]
    if pipeline_name:
        groups.insert(0, [(pipeline_name, *path) for path in unscoped])
    return groups


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


@dataclass(frozen=True)
class Document:
    """One configuration document: a TOML file, or the values set in code; `secrets` when it may hold secrets."""

    origin: str
    tree: Mapping[str, Any]
    secrets: bool

    def where(self, path: tuple[str, ...], table: bool = False) -> str:
        """How `lakeload config show` and errors name a value at `path` here."""
        if table:
            return f"{self.origin} [{'.'.join(path)}]"
        return f"{self.origin} [{'.'.join(path[:-1])}] {path[-1]}"


def documents(files: list[str] | None = None) -> list[Document]:
    """The TOML files (`toml_files()` unless given) and the values set in code, in precedence order, then the
    providers registered with `lakeload.config.register_provider` (in the order registered, as dlt reads them)."""
    files = toml_files() if files is None else files
    docs = [Document(path, _read_toml(path), os.path.basename(path) == "secrets.toml") for path in files]
    in_code = [Document("set in code: lakeload.secrets", memory.tree(True), True),
               Document("set in code: lakeload.config", memory.tree(False), False)]
    first_config = next((i for i, doc in enumerate(docs) if not doc.secrets), len(docs))
    docs.insert(first_config, in_code[1])
    docs.insert(0, in_code[0])
    docs += [Document(provider_origin(p.name), p.document, p.supports_secrets) for p in providers.registered()]
    return [doc for doc in docs if doc.tree]


def provider_origin(name: str) -> str:
    """How a registered provider is named as a value's source."""
    return f"provider {name}"


_parsed: dict[str, tuple[bytes, ConfigTree]] = {}  # path -> (content, tables): a lookup per item stays cheap


def _read_toml(path: str) -> ConfigTree:
    """A configuration file's tables (`ConfigFileError` when malformed); unknown keys are warned about once.

    The file is read on every call (a changed file is seen at once) but parsed again only when it changed."""
    data = read_toml_bytes(path)
    cached = _parsed.get(path)
    if cached is not None and cached[0] == data:
        return cached[1]
    tree = parse_toml(path, data)
    unknown_keys.check_file(path, data, tree)
    _parsed[path] = (data, tree)
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


def read_values(docs: list[Document], paths: list[tuple[str, ...]]) -> Iterator[tuple[Document, tuple[str, ...], Any]]:
    """(document, key path, value) of every key path set in the documents, in precedence order."""
    for doc in docs:
        for path in paths:
            value = _lookup(doc.tree, path)
            if value is not None:
                yield doc, path, value


def _lookup(tree: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = tree
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def resolve(
    sections: tuple[str, ...],
    key: str,
    pipeline_name: str | None = None,
    explicit: Any = None,
    hint: type | None = None,
    required: bool = False,
    environ: Mapping[str, str] | None = None,
    secret: bool = False,
    config_section: str | None = None,
) -> Resolved:
    """Resolve one value; raises `ConfigFieldMissingError` listing every key tried when required.

    A `secret` value found in a config.toml (or set with `lakeload.config[...]`) is a `ConfigValueNotSecretError`,
    as in dlt: secrets belong in secrets.toml or the environment. `config_section` is kept in every path tried
    (see `candidate_paths`): dlt's `[sources.<section>.data_writer]` down to `[data_writer]`.
    """
    groups = _path_groups(sections, key, pipeline_name, config_section)
    keys_tried = [env_name(p) for group in groups for p in group]
    env = os.environ if environ is None else environ
    _note((*sections, config_section) if config_section else sections, key, env)
    if explicit is not None:
        return Resolved(explicit, "explicit argument", keys_tried)
    files = toml_files()
    docs = documents(files)
    for paths in groups:
        found = _find(paths, env, docs, hint, secret)
        if found is not None:
            return Resolved(found[0], found[1], keys_tried, files, found[2], found[3])
    if required:
        raise ConfigFieldMissingError(".".join(sections), key, keys_tried, files or [os.path.abspath(".lakeload/config.toml")])
    return Resolved(None, None, keys_tried, files)


def _find(
    paths: list[tuple[str, ...]], env: Mapping[str, str], docs: list[Document], hint: type | None, secret: bool
) -> tuple[Any, str, tuple[str, ...], bool] | None:
    """(value, source, path, from a secrets document) of the first of `paths` set in the environment, else in the
    documents; None when none is."""
    for path in paths:
        name = env_name(path)
        if name in env:
            source = f"environment variable {name}"
            return coerce_value(env[name], hint, source, secret), source, path, False
    for doc, path, value in read_values(docs, paths):
        source = doc.where(path)
        if secret and not doc.secrets:
            raise ConfigValueNotSecretError(".".join(path), doc.origin)
        return coerce_value(value, hint, source, secret), source, path, doc.secrets
    return None


def lookup(key: str, secrets_only: bool, environ: Mapping[str, str] | None = None) -> Resolved:
    """The value at exactly the dotted `key` (no fallback to other sections), as `lakeload.config[key]` reads it.

    Looks in the environment (`SOURCES__MY_SOURCE__API_KEY`), then the documents; `secrets_only` skips the
    config.toml files and `lakeload.config` values (dlt's `secrets[...]` reads only where secrets may be).

    >>> lookup("sources.my_source.api_key", secrets_only=True).value is None
    True
    """
    path = memory.split_key(key)
    env = os.environ if environ is None else environ
    unknown_keys.check_environment(env)
    docs = [doc for doc in documents() if doc.secrets or not secrets_only]
    found = _find([path], env, docs, None, secret=False)
    tried = [env_name(path)] + [f"{doc.origin} [{'.'.join(path[:-1])}] {path[-1]}" for doc in docs]
    if found is None:
        return Resolved(None, None, tried, [doc.origin for doc in docs])
    return Resolved(found[0], found[1], tried, path=found[2], from_secrets=found[3])


@dataclass(frozen=True)
class ResolvedSection:
    """A nested section (e.g. credentials) gathered field by field, with the source of every field.

    `native` is a whole-section string that is not a JSON object (e.g. a connection string).
    """

    fields: CredentialFields
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
        self.fields: CredentialFields = {}
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


def _gather_env(gathered: _SectionGatherer, paths: list[tuple[str, ...]], env: Mapping[str, str]) -> None:
    """Whole-section variables (`..._CREDENTIALS='{...}'`) and field variables (`..._CREDENTIALS__<FIELD>`)."""
    for path in paths:
        name = env_name(path)
        if name in env:
            gathered.add_whole(env[name], f"environment variable {name}")
        prefix = name + "__"
        for var in sorted(env):
            field_name = var[len(prefix):]
            if var.startswith(prefix) and field_name and "__" not in field_name:
                gathered.add_fields({field_name.lower(): env[var]}, f"environment variable {var}")


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
    groups = _path_groups(sections, key, pipeline_name)
    keys_tried = [env_name(p) for group in groups for p in group]
    env = os.environ if environ is None else environ
    _note(sections, key, env)
    if explicit is not None:
        from lakeload.config.credentials import Credentials

        creds = Credentials.from_value(explicit, "explicit argument")
        return ResolvedSection(creds.to_dict(), creds.sources, creds.native, creds.native_source, keys_tried)
    gathered = _SectionGatherer()
    files = toml_files()
    docs = documents(files)
    for paths in groups:
        _gather_env(gathered, paths, env)
        for doc, path, value in read_values(docs, paths):
            gathered.add_whole(value, doc.where(path, table=isinstance(value, Mapping)))
    return ResolvedSection(
        gathered.fields, gathered.sources, gathered.native, gathered.native_source, keys_tried, files
    )
