"""dlt's `dlt.common.exceptions` as user code imports it (`from lakeload.common.exceptions import ...`).

`DltException` is lakeload's error base (`LakeloadError`): `except DltException` catches every error lakeload
raises. `MissingDependencyException` takes dlt's arguments (who needs it, the packages) and names the `pip install`
of each; it is a `MissingDependencyError`, so lakeload's own handlers treat it as theirs. `TerminalException` and
`TransientException` are dlt's marker bases a user's source raises to say whether retrying can help.

>>> str(MissingDependencyException("my source", ["psycopg2-binary"])).splitlines()[1]
'You must install additional dependencies to run `my source`. With pip: pip install "psycopg2-binary"'
"""

from __future__ import annotations

from collections.abc import Sequence

from lakeload.common.runtime.signals import SignalReceivedException
from lakeload.errors import LakeloadError, MissingDependencyError

__all__ = [
    "DltException", "MissingDependencyException", "SignalReceivedException", "TerminalException", "TerminalValueError",
    "TransientException",
]

DltException = LakeloadError


class MissingDependencyException(MissingDependencyError):
    """`caller` needs `dependencies` (pip requirement strings) that are not installed; `appendix` adds a line."""

    def __init__(self, caller: str, dependencies: Sequence[str], appendix: str = "") -> None:
        self.caller = caller
        self.dependencies = list(dependencies)
        install = " ".join(f'pip install "{dependency}"' for dependency in self.dependencies)
        message = f"\nYou must install additional dependencies to run `{caller}`. With pip: {install}"
        super().__init__(f"{message}\n{appendix}" if appendix else message)


class TerminalException(BaseException):
    """Marks an error that retrying will not fix (dlt's marker base; combine it with an exception class)."""


class TransientException(BaseException):
    """Marks an error that may go away when retried (dlt's marker base; combine it with an exception class)."""


class TerminalValueError(ValueError, TerminalException):
    """A `ValueError` retrying will not fix."""
