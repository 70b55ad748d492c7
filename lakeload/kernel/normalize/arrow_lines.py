"""Executor-safe: `LineIndex`, the records of a JSONL split as byte ranges of its buffer (read by `arrow_read`,
renamed in place by `arrow_alias`).

>>> lines = LineIndex.build(bytearray(b'{"a":1}\\n\\n{"a":2}\\n'))
>>> len(lines), lines.line(1)
(2, b'{"a":2}')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa


def _spaces(data: bytes | bytearray, ranges: list[tuple[Any, Any]]) -> bytes | bytearray:
    """`data` with the byte ranges overwritten by spaces (a mutable copy first if it is `bytes`)."""
    if not ranges:
        return data
    out = data if isinstance(data, bytearray) else bytearray(data)
    for start, end in ranges:
        out[int(start) : int(end)] = b" " * (int(end) - int(start))
    return out


@dataclass
class LineIndex:
    """The records of a split: byte ranges of its non-blank lines, without the newline.

    Records left to Python are blanked (overwritten with spaces, which pyarrow skips like blank lines)
    in the split's buffer, so pyarrow reads the others without a copy; their bytes are kept aside.
    """

    data: bytes | bytearray
    starts: np.ndarray
    ends: np.ndarray
    odd: list[int]  # records that do not start with `{` (not objects, a BOM, ...): left to Python
    saved: dict[int, bytes] = field(default_factory=dict)  # blanked records
    originals: dict[int, bytes] = field(default_factory=dict)  # records with a renamed key (`rename_rare`)

    @classmethod
    def build(cls, data: bytes | bytearray) -> LineIndex:
        buf = np.frombuffer(data, np.uint8)
        newlines = np.flatnonzero(buf == 10)
        starts = np.concatenate((np.zeros(1, np.int64), newlines + 1))
        ends = np.concatenate((newlines, np.array([len(data)], np.int64)))
        keep = ends > starts
        starts, ends = starts[keep], ends[keep]
        odd = np.flatnonzero(buf[starts] != ord("{")).tolist() if len(starts) else []
        blank = [i for i in odd if not bytes(data[starts[i] : ends[i]]).strip()]
        if blank:
            keep = np.ones(len(starts), bool)
            keep[blank] = False
            # blank to Python (`bytes.strip`), maybe not to pyarrow (a form feed): make them spaces
            data = _spaces(data, [(starts[i], ends[i]) for i in blank if bytes(data[starts[i] : ends[i]]).strip(b" \t\r")])
            starts, ends = starts[keep], ends[keep]
            odd = np.flatnonzero(buf[starts] != ord("{")).tolist() if len(starts) else []
        return cls(data, starts, ends, odd)

    def __len__(self) -> int:
        return len(self.starts)

    def line(self, rec: int) -> bytes:
        """The record's bytes as the split holds them (before any blanking or renaming)."""
        saved = self.saved.get(rec)
        if saved is None:
            saved = self.originals.get(rec)
        return saved if saved is not None else bytes(self.data[self.starts[rec] : self.ends[rec]])

    def records_at(self, positions: list[int]) -> list[int]:
        """The record holding each byte position."""
        found = np.searchsorted(self.starts, np.asarray(positions, np.int64), side="right") - 1
        return [int(r) for r in found]

    def blank(self, recs: set[int]) -> None:
        """Hide records from pyarrow (their bytes stay available to `line`)."""
        new = [rec for rec in recs if rec not in self.saved]
        for rec in new:
            self.saved[rec] = self.line(rec)
        self.data = _spaces(self.data, [(self.starts[rec], self.ends[rec]) for rec in new])

    def buffer(self, records: int) -> pa.Buffer:
        """The bytes of the first `records` records (blanked ones included, as blanks)."""
        end = len(self.data) if records >= len(self) else int(self.starts[records])
        return pa.py_buffer(memoryview(self.data)[:end])
