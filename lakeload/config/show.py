"""What lakeload would use, and where each value comes from: the API behind `lakeload config show`.

    lakeload config show --pipeline quick_start

prints lines such as `destination.filesystem.bucket_url = /data/bucket  (environment variable
DESTINATION__FILESYSTEM__BUCKET_URL)`, then the TOML files read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from lakeload.config.credentials import MASK, is_secret_key, mask_value
from lakeload.config.resolver import Resolved, resolve, resolve_section, toml_files
from lakeload.errors import ConfigurationError

NOT_SET = "(not set)"


@dataclass(frozen=True)
class ConfigLine:
    """One resolved setting: dotted key, display value (secrets masked), and its source.

    `source` is None when nothing configures the key; `default` is then what lakeload uses.
    """

    key: str
    value: Any = None
    source: str | None = None
    default: Any = None
    note: str | None = None

    @property
    def is_set(self) -> bool:
        return self.source is not None

    def __str__(self) -> str:
        if self.is_set:
            text = f"{self.key} = {_display(self.value)}  ({self.source})"
        elif self.default is not None:
            text = f"{self.key} = {_display(self.default)}  (not set; default)"
        else:
            text = f"{self.key} = {NOT_SET}"
        return f"{text}  [{self.note}]" if self.note else text


def _display(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return repr(value)


def _line(key: str, get: Callable[[], Resolved], default: Any = None, secret: bool = False) -> ConfigLine:
    try:
        resolved = get()
    except ConfigurationError as exc:
        return ConfigLine(key, default=default, note=f"invalid: {str(exc).splitlines()[0]}")
    value = resolved.value
    if value is not None and secret:
        value = mask_value(key.rsplit(".", 1)[-1], value)
    return ConfigLine(key, value, resolved.source, default)


def _destination_lines(destination: str, pipeline_name: str | None) -> list[ConfigLine]:
    from lakeload.destinations.impl.filesystem.configuration import (
        DEFAULT_LAYOUT,
        DEFAULT_MAX_STATE_FILES,
        normalize_bucket_url,
    )

    sections = ("destination", destination)
    prefix = ".".join(sections)
    lines = []
    bucket = resolve(sections, "bucket_url", pipeline_name, hint=str)
    note = None
    if isinstance(bucket.value, str):
        try:
            normalized = normalize_bucket_url(bucket.value)
            note = f"used as {normalized}" if normalized != bucket.value else None
        except ConfigurationError as exc:
            note = f"invalid: {str(exc).splitlines()[0]}"
    lines.append(ConfigLine(f"{prefix}.bucket_url", bucket.value, bucket.source, note=note))

    def get(key: str, hint: type) -> Callable[[], Resolved]:
        return partial(resolve, sections, key, pipeline_name, hint=hint)

    if destination != "filesystem":
        lines.append(_line(f"{prefix}.destination_type", get("destination_type", str)))
    lines.append(_line(f"{prefix}.layout", get("layout", str), DEFAULT_LAYOUT))
    lines.append(_line(f"{prefix}.kwargs", get("kwargs", dict), secret=True))
    lines.append(_line(f"{prefix}.client_kwargs", get("client_kwargs", dict), secret=True))
    lines.append(_line(f"{prefix}.deltalake_storage_options", get("deltalake_storage_options", dict), secret=True))
    lines.append(_line(f"{prefix}.max_state_files", get("max_state_files", int), DEFAULT_MAX_STATE_FILES))
    lines.append(_line(f"{prefix}.always_refresh_views", get("always_refresh_views", bool), False))
    creds = resolve_section(sections, "credentials", pipeline_name)
    if creds.native is not None:
        lines.append(ConfigLine(f"{prefix}.credentials", MASK, creds.native_source))
    for name, value in creds.fields.items():
        shown = MASK if is_secret_key(name) else mask_value(name, value)
        lines.append(ConfigLine(f"{prefix}.credentials.{name}", shown, creds.sources[name]))
    if not creds.is_set:
        lines.append(ConfigLine(f"{prefix}.credentials"))
    return lines


def _first(getters: list[Callable[[], Resolved]]) -> Resolved:
    resolved = getters[0]()
    for getter in getters[1:]:
        if resolved.value is not None:
            break
        resolved = getter()
    return resolved


def _runtime_lines(pipeline_name: str | None) -> list[ConfigLine]:
    from lakeload.extract.extractor import FILE_MAX_BYTES
    from lakeload.spark.session import DEFAULT_MASTER

    def compression() -> Resolved:
        return _first([
            partial(resolve, ("normalize", "data_writer"), "disable_compression", pipeline_name, hint=bool),
            partial(resolve, ("data_writer",), "disable_compression", pipeline_name, hint=bool),
        ])

    return [
        _line("normalize.data_writer.disable_compression", compression, False),
        _line("extract.file_max_bytes", partial(resolve, ("extract",), "file_max_bytes", pipeline_name, hint=int),
              FILE_MAX_BYTES),
        _line("spark.master", partial(resolve, ("spark",), "master", pipeline_name, hint=str), DEFAULT_MASTER),
    ]


def show_configuration(pipeline_name: str | None = None, destination: str = "filesystem") -> list[ConfigLine]:
    """Resolve every setting of the filesystem destination (and a few runtime ones), secrets masked.

    Uses the resolver's precedence: explicit > env > secrets.toml > config.toml > ~/.lakeload.

    >>> lines = show_configuration("quick_start")
    >>> [str(line) for line in lines if line.key.endswith("bucket_url")]
    ['destination.filesystem.bucket_url = (not set)']
    """
    return _destination_lines(destination, pipeline_name) + _runtime_lines(pipeline_name)


def render_configuration(lines: list[ConfigLine], files: list[str] | None = None) -> str:
    """The text `lakeload config show` prints: one `key = value  (source)` line each, then the TOML files read."""
    files = toml_files() if files is None else files
    out = [str(line) for line in lines]
    out.append("")
    if files:
        out.append("TOML files read (highest precedence first):")
        out += [f"  {path}" for path in files]
    else:
        out.append("TOML files read: none (looked for .lakeload/secrets.toml, .lakeload/config.toml, "
                   "~/.lakeload/secrets.toml, ~/.lakeload/config.toml)")
    return "\n".join(out)
