"""Silent typos made loud: keys and sections that lakeload does not read, with the closest known name.

Configuration files are checked once per process and content, when the resolver first reads them;
environment variables once per variable, when the resolver first looks at the environment. Each unknown
key is reported once, as an `UnknownConfigKeyWarning` and on the `lakeload.config` logger:

    Unknown configuration key `layuot` in [destination.filesystem] (/home/me/project/.lakeload/config.toml):
    lakeload does not read it (the value is ignored). Did you mean `layout`?

What counts as known is `lakeload.config.known_keys`. Sections that are not lakeload's (`[runtime]`,
`[sources.my_api]`, `[destination.bigquery]`) are left alone unless their name is a near-miss of one of
lakeload's; keys dlt reads where lakeload does not are never reported, only listed by `lakeload config show`.

>>> [u.message() for u in find_unknown({"destination": {"filesystem": {"layuot": "x"}}}, "config.toml")]
['Unknown configuration key `layuot` in [destination.filesystem] (config.toml): lakeload does not read it (the value is ignored). Did you mean `layout`?']
"""

from __future__ import annotations

import difflib
import hashlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lakeload.config.known_keys import DLT_SECTIONS, Section, root
from lakeload.config.open_types import ConfigTree
from lakeload.errors import UnknownConfigKeyWarning
from lakeload.user_warnings import warn_user

logger = logging.getLogger("lakeload.config")
NEAR_MISS = 0.75  # difflib ratio from which a name is taken for a misspelling of a known one
HINT = 0.6  # lower bar for the hint on a key that is reported anyway (strict sections)
FILESYSTEM = "filesystem"
ENV_PREFIX = "environment variable "


@dataclass(frozen=True)
class UnknownKey:
    """A key (or section) set in `source` that lakeload does not read.

    `kind` is "key", "section", or "dlt" (a key dlt reads but lakeload does not: listed, never warned about);
    `suggestion` is the closest known name for the last element of `path`.
    """

    path: tuple[str, ...]
    source: str
    kind: str
    suggestion: str | None = None

    @property
    def is_env(self) -> bool:
        return self.source.startswith(ENV_PREFIX)

    @property
    def dotted(self) -> str:
        return ".".join(self.path)

    def hint(self) -> str:
        """"did you mean ..." for the suggestion, in the form the source uses (TOML name or variable)."""
        if self.suggestion is None:
            return ""
        fixed = (*self.path[:-1], self.suggestion)
        if self.is_env:
            parts = self.source[len(ENV_PREFIX):].split("__")
            parts[len(self.path) - 1] = self.suggestion.upper()
            return f"did you mean {'__'.join(parts)}?"
        return f"did you mean [{'.'.join(fixed)}]?" if self.kind == "section" else f"did you mean `{self.suggestion}`?"

    def message(self) -> str:
        """The warning text: what, where, and the closest known name."""
        hint = self.hint()
        hint = f" {hint[0].upper()}{hint[1:]}" if hint else ""
        if self.kind == "section":
            return (f"Unknown configuration section [{self.dotted}] ({self.source}): lakeload does not read it "
                    f"(its values are ignored).{hint}")
        section = ".".join(self.path[:-1])
        where = f" in [{section}]" if section else ""
        return (f"Unknown configuration key `{self.path[-1]}`{where} ({self.source}): lakeload does not read it "
                f"(the value is ignored).{hint}")


def closest(name: str, known: Iterable[str], cutoff: float = NEAR_MISS) -> str | None:
    """The known name most similar to `name`, when similar enough.

    >>> closest("layuot", ["layout", "bucket_url"]), closest("runtime", ["spark", "destination"])
    ('layout', None)
    """
    matches = difflib.get_close_matches(name, sorted(known), n=1, cutoff=cutoff)
    return matches[0] if matches else None


class _Walker:
    """Walks one parsed tree (a file, or one environment variable as a one-path tree)."""

    def __init__(self, source: str, filesystem_names: frozenset[str] = frozenset()) -> None:
        self.source = source
        self.filesystem_names = filesystem_names  # named destinations known to be of type filesystem
        self.found: list[UnknownKey] = []

    def report(self, path: tuple[str, ...], kind: str, suggestion: str | None = None) -> None:
        self.found.append(UnknownKey(path, self.source, kind, suggestion))

    def is_filesystem(self, name: str, value: Mapping[str, Any]) -> bool:
        return name == FILESYSTEM or name in self.filesystem_names or value.get("destination_type") == FILESYSTEM

    def walk_root(self, tree: Mapping[str, Any], path: tuple[str, ...] = ()) -> None:
        """Top level: lakeload's sections, dlt's, and pipeline-scoped ones (`[<pipeline>.destination...]`)."""
        spec = root()
        for name, value in tree.items():
            if name in spec.nested:
                child = spec.nested[name]
                if isinstance(value, Mapping):
                    self.walk(child, value, (*path, name))
            elif isinstance(value, Mapping) and name not in DLT_SECTIONS:
                self.unknown_top(name, value, path)

    def unknown_top(self, name: str, value: Mapping[str, Any], path: tuple[str, ...]) -> None:
        """A near-miss of a lakeload section whose content fits it is a typo; any other table a pipeline scope."""
        spec = root()
        suggestion = closest(name, spec.nested)
        if suggestion is not None and not any(child in spec.nested for child in value):
            trial = _Walker(self.source, self.filesystem_names)
            trial.walk(spec.nested[suggestion], value, (*path, suggestion))
            if not any(u.kind != "dlt" for u in trial.found):
                self.report((*path, name), "section", suggestion)
            return
        if not path:  # scopes do not nest
            self.walk_root(value, (name,))

    def walk(self, spec: Section, node: Mapping[str, Any], path: tuple[str, ...]) -> None:
        for name, value in node.items():
            where = (*path, name)
            if name in spec.free:
                continue
            if name in spec.keys or name in spec.nested:
                child = spec.nested.get(name)
                if child is not None and isinstance(value, Mapping):
                    self.walk(child, value, where)
            elif name in spec.dlt_keys:
                self.report(where, "dlt")
            elif isinstance(value, Mapping):
                self.unknown_table(spec, name, value, where)
            else:
                self.unknown_key(spec, name, where)

    def unknown_table(self, spec: Section, name: str, value: Mapping[str, Any], where: tuple[str, ...]) -> None:
        if spec.any_child is not None:  # a destination: lakeload's when its type is filesystem
            if self.is_filesystem(name, value):
                self.walk(spec.any_child, value, where)
            elif "destination_type" not in value and closest(name, [FILESYSTEM]) is not None:
                self.report(where, "section", FILESYSTEM)
            return
        suggestion = closest(name, [*spec.nested, *spec.keys])
        if suggestion is not None or not spec.open_tables:
            self.report(where, "section", suggestion)

    def unknown_key(self, spec: Section, name: str, where: tuple[str, ...]) -> None:
        known = [*spec.keys, *spec.nested]
        suggestion = closest(name, known, HINT if spec.strict else NEAR_MISS)
        if spec.strict or suggestion is not None:
            self.report(where, "key", suggestion)


def find_unknown(tree: Mapping[str, Any], source: str, filesystem_names: frozenset[str] = frozenset()) -> list[UnknownKey]:
    """Every key and section in `tree` (a parsed configuration file) that lakeload does not read."""
    walker = _Walker(source, filesystem_names)
    walker.walk_root(tree)
    return walker.found


def _env_tree(var: str, value: str) -> ConfigTree | None:
    """`DESTINATION__FILESYSTEM__LAYOUT=x` as `{"destination": {"filesystem": {"layout": "x"}}}`, when it may be lakeload's."""
    parts = var.lower().split("__")
    if len(parts) < 2 or not all(parts):
        return None
    sections = list(root().nested)
    if not any(closest(part, sections) is not None for part in parts[:2]):
        return None
    tree: ConfigTree = {parts[-1]: value}
    for part in reversed(parts[:-1]):
        tree = {part: tree}
    return tree


def _env_filesystem_names(env: Mapping[str, str]) -> frozenset[str]:
    """Destination names given `destination_type = filesystem` by an environment variable."""
    suffix = "__DESTINATION_TYPE"
    return frozenset(
        var[: -len(suffix)].lower().split("__")[-1] for var, value in env.items()
        if var.upper().endswith(suffix) and value.strip() == FILESYSTEM
    )


def find_unknown_env(env: Mapping[str, str], names: Iterable[str] | None = None) -> list[UnknownKey]:
    """Unknown keys set by the environment variables `names` (default: all of `env`)."""
    found: list[UnknownKey] = []
    filesystem_names = _env_filesystem_names(env)
    for var in sorted(env if names is None else names):
        tree = _env_tree(var, env[var])
        if tree is not None:
            found += find_unknown(tree, f"{ENV_PREFIX}{var}", filesystem_names)
    return found


_checked_files: set[tuple[str, bytes]] = set()
_checked_env: set[str] = set()
_reported: set[tuple[str, tuple[str, ...]]] = set()


def warn(unknown: list[UnknownKey]) -> None:
    """Warn about each unknown key once per process (dlt's keys are not warned about)."""
    for item in unknown:
        if item.kind == "dlt" or (item.source, item.path) in _reported:
            continue
        _reported.add((item.source, item.path))
        message = item.message()
        logger.warning(message)
        warn_user(message, UnknownConfigKeyWarning)


def check_file(path: str, data: bytes, tree: Mapping[str, Any]) -> None:
    """Warn about unknown keys of a configuration file the first time this process reads this content."""
    digest = hashlib.blake2b(data, digest_size=16).digest()
    if (path, digest) not in _checked_files:
        _checked_files.add((path, digest))
        warn(find_unknown(tree, path))


def check_environment(env: Mapping[str, str]) -> None:
    """Warn about unknown keys in environment variables not checked before in this process."""
    new = [var for var in env if var not in _checked_env]
    if new:
        _checked_env.update(new)
        warn(find_unknown_env(env, [var for var in new if "__" in var]))


def unknown_configuration(files: list[str], env: Mapping[str, str]) -> list[UnknownKey]:
    """Everything lakeload does not read in `files` and `env`, dlt's keys included (for `lakeload config show`)."""
    from lakeload.config.toml_reader import read_toml

    found: list[UnknownKey] = []
    for path in files:
        found += find_unknown(read_toml(path), path)
    return found + find_unknown_env(env)


def render_unknown(unknown: list[UnknownKey]) -> list[str]:
    """The "unused" part of `lakeload config show`: typos with their hint, then keys only dlt reads."""
    typos = [u for u in unknown if u.kind != "dlt"]
    dlt_only = [u for u in unknown if u.kind == "dlt"]
    out = ["Unused: not read by lakeload (a typo? these values are ignored):" if typos else "Unused: none"]
    out += [f"  {u.dotted}  ({u.source})" + (f"  {u.hint()}" if u.hint() else "") for u in typos]
    if dlt_only:
        out.append("Unused: read by dlt, not by lakeload:")
        out += [f"  {u.dotted}  ({u.source})" for u in dlt_only]
    return out
