"""`ConfigLine`: one setting as `lakeload config show` prints it (its value, secrets masked, and where it came from).

>>> str(ConfigLine("destination.filesystem.layout", "{table_name}/{file_id}.{ext}", "config.toml"))
'destination.filesystem.layout = {table_name}/{file_id}.{ext}  (config.toml)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
