"""What lakeload would use, and where each value comes from: the API behind `lakeload config show`.

    lakeload config show --pipeline quick_start

prints lines such as `destination.filesystem.bucket_url = /data/bucket  (environment variable
DESTINATION__FILESYSTEM__BUCKET_URL)`, the values set for source arguments (`sources.crm.page_size = 50
(.lakeload/config.toml [sources.crm] page_size)`), then the keys set but not read by lakeload ("unused", with the
closest known key: `destination.filesystem.layuot  (.lakeload/config.toml)  did you mean `layout`?`),
then the TOML files read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from lakeload.config.credentials import MASK, is_secret_key, mask_value, url_without_password
from lakeload.config.lines import ConfigLine
from lakeload.config.providers import registered
from lakeload.config.resolver import Resolved, resolve, resolve_section, toml_files
from lakeload.config.source_lines import source_lines
from lakeload.config.unknown_keys import render_unknown, unknown_configuration
from lakeload.errors import ConfigurationError


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
            note = f"used as {url_without_password(normalized)}" if normalized != bucket.value else None
        except ConfigurationError as exc:
            note = f"invalid: {str(exc).splitlines()[0]}"
    shown = url_without_password(bucket.value) if isinstance(bucket.value, str) else bucket.value
    lines.append(ConfigLine(f"{prefix}.bucket_url", shown, bucket.source, note=note))

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
    from lakeload.config.data_writer import DataWriterSettings
    from lakeload.config.key_docs import field_default
    from lakeload.extract.writer import FILE_MAX_BYTES
    from lakeload.runtime.lock import DEFAULT_LOCK_TIMEOUT, WAIT

    def compression() -> Resolved:
        return _first([
            partial(resolve, ("normalize", "data_writer"), "disable_compression", pipeline_name, hint=bool),
            partial(resolve, ("data_writer",), "disable_compression", pipeline_name, hint=bool),
        ])

    def normalize_writer(key: str) -> Resolved:
        return resolve(("normalize",), key, pipeline_name, hint=int, config_section="data_writer")

    return [
        _line("normalize.data_writer.disable_compression", compression, False),
        *(_line(f"normalize.data_writer.{key}", partial(normalize_writer, key), field_default(DataWriterSettings, key))
          for key in ("file_max_items", "file_max_bytes", "buffer_max_items")),
        _line("extract.file_max_bytes", partial(resolve, ("extract",), "file_max_bytes", pipeline_name, hint=int),
              FILE_MAX_BYTES),
        _line("pipeline.lock", partial(resolve, ("pipeline",), "lock", pipeline_name, hint=str), WAIT),
        _line("pipeline.lock_timeout", partial(resolve, ("pipeline",), "lock_timeout", pipeline_name, hint=float),
              DEFAULT_LOCK_TIMEOUT),
        *_spark_lines(pipeline_name),
    ]


def _working_url_line(pipeline_name: str | None) -> ConfigLine:
    from lakeload.storage.working import is_object_store, working_path

    resolved = resolve(("spark",), "working_url", pipeline_name, hint=str)
    if resolved.value is None:
        return ConfigLine("spark.working_url", note="load packages stay in the pipeline folder")
    url, name = str(resolved.value), pipeline_name or "<pipeline_name>"
    try:
        if is_object_store(url):
            note = f"package data under {url.rstrip('/')}/{name} (credentials: [spark.working_credentials])"
        else:
            note = f"load packages under {working_path(url)}/{name}"
    except ConfigurationError as exc:
        note = f"invalid: {str(exc).splitlines()[0]}"
    return ConfigLine("spark.working_url", resolved.value, resolved.source, note=note)


def _engine_lines(pipeline_name: str | None) -> list[ConfigLine]:
    """`[spark] mode` and the Spark Connect URL (`[spark] remote` / SPARK_REMOTE), its parameters masked."""
    from lakeload.spark.connect_session import DEFAULT_MODE, mask_connect_url, resolve_engine

    try:
        engine = resolve_engine(pipeline_name)
    except ConfigurationError as exc:
        return [ConfigLine("spark.mode", default=DEFAULT_MODE, note=f"invalid: {str(exc).splitlines()[0]}")]
    remote = mask_connect_url(engine.remote) if engine.remote else None
    note = None if engine.remote else "Spark Connect: the `lakeload spark start` server when it runs (mode auto/remote)"
    return [ConfigLine("spark.mode", engine.mode if engine.mode_source else None, engine.mode_source, DEFAULT_MODE),
            ConfigLine("spark.remote", remote, engine.remote_source, note=note)]


def _spark_lines(pipeline_name: str | None) -> list[ConfigLine]:
    """Master, working_url, and every Spark setting a session lakeload starts would get, with its source."""
    from lakeload.spark.settings import (
        DEFAULT_MASTER,
        JAVA_OPTION_KEYS,
        PINNED_CONF,
        default_conf,
        resolve_spark_settings,
    )
    from lakeload.spark.warm_engine import DEFAULT_IDLE_SECONDS

    master = partial(resolve, ("spark",), "master", pipeline_name, hint=str)
    try:
        settings = resolve_spark_settings(pipeline_name)
    except ConfigurationError as exc:
        invalid = ConfigLine("spark.conf", note=f"invalid: {str(exc).splitlines()[0]}")
        return [_line("spark.master", master, DEFAULT_MASTER), _working_url_line(pipeline_name), invalid]
    lines = [ConfigLine("spark.master", settings.master, settings.master_source, DEFAULT_MASTER),
             *_engine_lines(pipeline_name), _working_url_line(pipeline_name),
             *(_line(f"spark.{key}", partial(resolve, ("spark",), key, pipeline_name, hint=bool), True)
               for key in ("class_archive", "lazy_jit", "warm")),
             _line("spark.warm_idle_seconds", partial(resolve, ("spark",), "warm_idle_seconds", pipeline_name, hint=float),
                   int(DEFAULT_IDLE_SECONDS))]
    defaults = default_conf()
    for key in sorted({*defaults, *settings.conf, *PINNED_CONF}):
        name = f'spark.conf."{key}"'
        if key in PINNED_CONF:
            ignored = settings.conf.get(key, PINNED_CONF[key]) != PINNED_CONF[key]
            lines.append(ConfigLine(name, PINNED_CONF[key], "kept by lakeload",
                                    note=f"ignored: {settings.sources[key]}" if ignored else None))
        elif key in settings.conf:
            note = "added after lakeload's log options" if key in JAVA_OPTION_KEYS else None
            lines.append(ConfigLine(name, mask_value(key, settings.conf[key]), settings.sources[key], note=note))
        else:
            lines.append(ConfigLine(name, default=defaults[key]))
    return lines


def show_configuration(pipeline_name: str | None = None, destination: str = "filesystem") -> list[ConfigLine]:
    """Resolve every setting of the filesystem destination (and the runtime and Spark ones), secrets masked;
    then every `sources.*` value set and the source arguments injected in this process (see `show_sources`).

    Uses the resolver's precedence: explicit > env > secrets.toml > config.toml > ~/.lakeload. The Spark
    settings are those a session lakeload starts would get; an active session or spark-submit's win over them.

    >>> lines = show_configuration("quick_start")
    >>> [str(line) for line in lines if line.key.endswith("bucket_url")]
    ['destination.filesystem.bucket_url = (not set)']
    """
    return _destination_lines(destination, pipeline_name) + _runtime_lines(pipeline_name) + source_lines(pipeline_name)


def render_configuration(
    lines: list[ConfigLine], files: list[str] | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """The text `lakeload config show` prints: one `key = value  (source)` line each, the keys lakeload does
    not read in `files` and `environ` (typos, with the closest known key), then the TOML files read."""
    files = toml_files() if files is None else files
    out = [str(line) for line in lines]
    out.append("")
    out += render_unknown(unknown_configuration(files, os.environ if environ is None else environ))
    out.append("")
    if files:
        out.append("TOML files read (highest precedence first):")
        out += [f"  {path}" for path in files]
    else:
        out.append("TOML files read: none (looked for .lakeload/secrets.toml, .lakeload/config.toml, "
                   "~/.lakeload/secrets.toml, ~/.lakeload/config.toml)")
    custom = registered()
    if custom:
        out.append("Providers registered in code (read after the TOML files, in this order):")
        out += [f"  {p.name}" + (f" ({', '.join(p.locations)})" if p.locations else "")
                + ("" if p.supports_secrets else " (no secrets)") for p in custom]
    return "\n".join(out)
