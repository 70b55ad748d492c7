"""Spark settings from lakeload's configuration: `[spark] master` and the `[spark.conf]` table.

```toml
[spark]
master = "spark://host:7077"

[spark.conf]
"spark.executor.memory" = "2g"
"spark.sql.shuffle.partitions" = 8
```

Environment: `SPARK__MASTER`, `SPARK__CONF` (a JSON object with Spark's exact keys) and single settings as
`SPARK__CONF__<KEY>`, the key written with `__` for its dots (`SPARK__CONF__SPARK__EXECUTOR__MEMORYOVERHEAD`).
Spark's keys are case-sensitive, so such a name is matched case-insensitively against the settings Spark 4
defines (`spark_keys.txt`) and takes their spelling; a name that matches none is an error (use `SPARK__CONF`).
Pipeline-scoped forms (`<PIPELINE>__SPARK__CONF__...`, `[<pipeline>.spark.conf]`) come first. Every setting
is taken from the first place it is found: env (a single-key variable before the JSON object) >
secrets.toml > config.toml > ~/.lakeload.

>>> resolve_spark_settings("my_pipeline").conf
{}
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

import orjson

from lakeload.config.known_keys import note_lookup
from lakeload.config.open_types import ConfigTree
from lakeload.config.resolver import env_name, flat_text, read_toml_values, resolve, toml_files
from lakeload.errors import ConfigurationError

if TYPE_CHECKING:
    pass

logger = logging.getLogger("lakeload.spark")
MASTER_KEY = "spark.master"
DEFAULT_MASTER = "local[*]"
DEFAULT_CONF: dict[str, str] = {
    "spark.ui.showConsoleProgress": "false",
    "spark.ui.enabled": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.python.worker.reuse": "true",
}
# dlt's timestamps are UTC: Spark's conversions of naive values and strings must not shift them
PINNED_CONF: dict[str, str] = {"spark.sql.session.timeZone": "UTC"}
LOG4J_CONFIG = os.path.join(os.path.dirname(__file__), "log4j2.properties")
DEFAULT_LOG_FILE = os.path.join("~", ".lakeload", "logs", "spark.log")
_warned: set[str] = set()


@dataclass(frozen=True)
class SparkSettings:
    """Spark settings the user configured (not lakeload's defaults), each with where it came from."""

    master: str | None = None
    master_source: str | None = None
    conf: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    log_file: str = DEFAULT_LOG_FILE
    class_archive: bool = True  # start the JVM with a class-data archive (`lakeload.spark.class_archive`)
    lazy_jit: bool = True  # a local session's JVM optimizes only code that stays hot (`with_lazy_jit`)


# lakeload's Java options (its log4j configuration) stay first in these when a user sets them too
JAVA_OPTION_KEYS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")
LAZY_JIT_OPTIONS = (  # HotSpot's defaults: 5000, 600, 15000, 40000
    "-XX:Tier4InvocationThreshold=100000 -XX:Tier4MinInvocationThreshold=20000 "
    "-XX:Tier4CompileThreshold=150000 -XX:Tier4BackEdgeThreshold=2000000"
)
PYTHON_KEY = "spark.pyspark.python"  # the Python executors start


def executors_python(conf: Mapping[str, str], environ: Mapping[str, str] | None = None) -> str:
    """The Python the executors start: `spark.pyspark.python`, else PYSPARK_PYTHON, else this interpreter."""
    env = os.environ if environ is None else environ
    return conf.get(PYTHON_KEY) or env.get("PYSPARK_PYTHON") or sys.executable


def is_local_master(master: str) -> bool:
    """True for masters whose executors run on this host (`local`, `local[4]`, `local-cluster[2,1,1024]`)."""
    return master == "local" or master.startswith(("local[", "local-cluster["))


def add_java_options(conf: Mapping[str, str], key: str, options: str, first: bool = False) -> dict[str, str]:
    """`conf` with `options` added to the Java options under `key`: after those already there, or `first`.

    A later option on the JVM's command line wins over an earlier one of the same name.

    >>> add_java_options({"spark.driver.extraJavaOptions": "-Da=1"}, "spark.driver.extraJavaOptions", "-Db=2")
    {'spark.driver.extraJavaOptions': '-Da=1 -Db=2'}
    """
    present = conf.get(key, "")
    return {**conf, key: " ".join(filter(None, (options, present) if first else (present, options)))}


def with_lazy_jit(master: str, conf: Mapping[str, str], enabled: bool = True) -> dict[str, str]:
    """`conf` with HotSpot's optimizing compiler (C2) kept for code that stays hot, when `enabled` (`[spark]
    lazy_jit`) and `master` runs the tasks in the driver's JVM (`local`, `local[N]`); configured Java options come
    later, so theirs win.

    Most of what that JVM runs in a lakeload session runs a few thousand times at its start (Spark's setup) and
    never again: C2's compiling of it cost 5-7 CPU seconds of a 1M-event run on 2 cores. With its thresholds
    raised 20-50x, C1 (the quick compiler) keeps that code and C2 still takes the loops that stay hot.

    >>> with_lazy_jit("local[*]", {})["spark.driver.extraJavaOptions"].split()[0]
    '-XX:Tier4InvocationThreshold=100000'
    >>> with_lazy_jit("local-cluster[2,1,1024]", {})
    {}
    """
    if not enabled or (master != "local" and not master.startswith("local[")):
        return dict(conf)
    return add_java_options(conf, "spark.driver.extraJavaOptions", LAZY_JIT_OPTIONS, first=True)


def warn_once(message: str) -> None:
    """Log `message` as a warning the first time this process meets it."""
    if message not in _warned:
        _warned.add(message)
        logger.warning(message)


@functools.lru_cache(maxsize=1)
def spark_keys() -> dict[str, str]:
    """Spark's settings by their lower-case spelling: `{"spark.executor.memoryoverhead": "spark.executor.memoryOverhead"}`."""
    text = resources.files("lakeload.spark").joinpath("spark_keys.txt").read_text()
    return {line.lower(): line for line in text.splitlines() if line and not line.startswith("#")}


def key_from_env(var: str, suffix: str) -> str:
    """The Spark key an environment variable `..._CONF__<suffix>` names, in Spark's spelling."""
    wanted = suffix.replace("__", ".").lower()
    key = spark_keys().get(wanted)
    if key is None:
        raise ConfigurationError(
            f"Environment variable {var} does not name a Spark setting lakeload knows ({wanted!r} is not one of "
            "Spark 4's settings, compared case-insensitively). Spark keys are case-sensitive and environment names "
            "are upper-case, so lakeload cannot spell unknown keys: set it in SPARK__CONF as a JSON object, e.g. "
            f"SPARK__CONF='{{\"{wanted}\": \"...\"}}' with the key in Spark's spelling, or under [spark.conf] in "
            ".lakeload/config.toml."
        )
    return key


def setting_text(key: str, value: Any, source: str) -> str:
    """A Spark setting's value as Spark wants it: a string (`8` -> "8", `true` -> "true")."""
    text = flat_text(value)
    if text is not None:
        return text
    raise ConfigurationError(
        f"Spark setting {key!r} from {source} is a {type(value).__name__}; Spark settings are strings, numbers "
        "or booleans. Write it as a string."
    )


def flatten(table: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Unquoted dotted TOML keys (`spark.executor.memory = "2g"`) arrive as nested tables: join them back."""
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            yield from flatten(value, f"{key}.")
        else:
            yield key, value


def _json_object(text: str, source: str) -> ConfigTree:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        value = exc
    if not isinstance(value, dict):
        raise ConfigurationError(
            f"{source} must be a JSON object of Spark settings, e.g. '{{\"spark.executor.memory\": \"2g\"}}'; "
            f"got {text[:80]!r}."
        )
    return value


class _Gathered:
    """Settings in precedence order: the first place a key is found wins."""

    def __init__(self) -> None:
        self.conf: dict[str, str] = {}
        self.sources: dict[str, str] = {}

    def add(self, key: str, value: Any, source: str) -> None:
        if key not in self.conf and value is not None:
            self.conf[key] = setting_text(key, value, source)
            self.sources[key] = source

    def add_table(self, table: Any, source: str) -> None:
        values = _json_object(table, source) if isinstance(table, str) else table
        if not isinstance(values, Mapping):
            raise ConfigurationError(f"{source} must be a table of Spark settings ([spark.conf]), not {values!r}.")
        for key, value in flatten(values):
            self.add(key, value, source)


def conf_paths(pipeline_name: str | None) -> list[tuple[str, ...]]:
    """Where `[spark.conf]` is looked up, most specific first (no section-less fallback such as `CONF`)."""
    return ([(pipeline_name, "spark", "conf")] if pipeline_name else []) + [("spark", "conf")]


def _gather_conf(pipeline_name: str | None, env: Mapping[str, str]) -> _Gathered:
    note_lookup(("spark",), "conf")
    gathered = _Gathered()
    paths = conf_paths(pipeline_name)
    for path in paths:
        name = env_name(path)
        prefix = f"{name}__"
        for var in sorted(v for v in env if v.startswith(prefix)):
            gathered.add(key_from_env(var, var[len(prefix):]), env[var], f"environment variable {var}")
        if name in env:
            gathered.add_table(env[name], f"environment variable {name}")
    for file, path, value in read_toml_values(toml_files(), paths):
        gathered.add_table(value, f"{file} [{'.'.join(path)}]")
    return gathered


def resolve_spark_settings(pipeline_name: str | None = None, environ: Mapping[str, str] | None = None) -> SparkSettings:
    """The Spark master and settings configured for `pipeline_name` (env and TOML), with their sources.

    `[spark] master` wins over a `"spark.master"` entry in `[spark.conf]`; the returned `conf` never holds it.

    >>> resolve_spark_settings("quick_start", {"SPARK__CONF__SPARK__SQL__SHUFFLE__PARTITIONS": "8"}).conf
    {'spark.sql.shuffle.partitions': '8'}
    """
    env = os.environ if environ is None else environ
    gathered = _gather_conf(pipeline_name, env)
    master = resolve(("spark",), "master", pipeline_name, hint=str, environ=env)
    conf_master = gathered.conf.pop(MASTER_KEY, None)
    conf_master_source = gathered.sources.pop(MASTER_KEY, None)
    log_file = str(resolve(("spark",), "log_file", pipeline_name, hint=str, environ=env).value or DEFAULT_LOG_FILE)
    archive = resolve(("spark",), "class_archive", pipeline_name, hint=bool, environ=env).value
    lazy_jit = resolve(("spark",), "lazy_jit", pipeline_name, hint=bool, environ=env).value
    if master.value is not None:
        conf_master, conf_master_source = str(master.value), master.source
    return SparkSettings(conf_master, conf_master_source, gathered.conf, gathered.sources, log_file,
                         archive is not False, lazy_jit is not False)


def spark_log_path(log_file: str = DEFAULT_LOG_FILE) -> str:
    """The absolute path of the Spark log file: Spark's and PySpark's error records go there, not to the terminal."""
    return os.path.abspath(os.path.expanduser(log_file))


def _java_property(name: str, value: str) -> str:
    return f'-D{name}="{value}"' if any(c.isspace() for c in value) else f"-D{name}={value}"


def default_conf(log_file: str = DEFAULT_LOG_FILE) -> dict[str, str]:
    """lakeload's defaults for a session it starts (logs to `log_file`, no UI, Arrow, microsecond Parquet timestamps)."""
    java_options = " ".join(
        (_java_property("log4j2.configurationFile", f"file:{LOG4J_CONFIG}"),
         _java_property("lakeload.spark.log", spark_log_path(log_file)))
    )
    return {**DEFAULT_CONF, "spark.driver.extraJavaOptions": java_options, "spark.executor.extraJavaOptions": java_options}


def session_conf(
    settings: SparkSettings, explicit: Mapping[str, str] | None = None, submitted: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Settings for a session lakeload starts: defaults < configured < `explicit` < spark-submit's, then pinned ones.

    >>> session_conf(SparkSettings(conf={"spark.sql.shuffle.partitions": "8"}))["spark.sql.shuffle.partitions"]
    '8'
    """
    defaults = default_conf(settings.log_file)
    merged = {**defaults, **settings.conf, **(explicit or {}), **(submitted or {})}
    for key in JAVA_OPTION_KEYS:  # the user's Java options come after lakeload's (the log file), not instead of them
        if merged[key] != defaults[key]:
            merged = add_java_options(merged, key, defaults[key], first=True)
    for key, value in PINNED_CONF.items():
        if merged.get(key, value) != value:
            warn_once(f"lakeload keeps {key}={value} (dlt's timestamps are UTC); the configured {merged[key]!r} is ignored.")
        merged[key] = value
    return merged


def warn_submitted(settings: SparkSettings, submitted: Mapping[str, str]) -> None:
    """One warning naming configured settings that spark-submit's own (`--master`, `--conf`) replace."""
    replaced = [MASTER_KEY] if settings.master and submitted.get(MASTER_KEY, settings.master) != settings.master else []
    replaced += [key for key, value in settings.conf.items() if submitted.get(key, value) != value]
    if replaced:
        warn_once(f"spark-submit's settings win over lakeload's configuration; ignored: {', '.join(replaced)}.")
