"""Executor-safe: a field's rare type read by pyarrow in the same parse, under a key of its own.

pyarrow's JSON reader gives each field one type per read, so a field that is a number in most records and a
string in a few (`external_ref` in 1% of the demo events) stops the read. The records of the rare type used
to be left to the Python normalizer, and their rows merged back into every table in record order (a `take`
of each table, ~6% of a task, plus their replay).

`rename_rare` gives those values' key a name of its own in the split's bytes, in place and of the same
length: its first byte becomes DEL (0x7F), which JSON allows unescaped in a string; no string of the split
may already be that alias. pyarrow then reads the rare values as a column of their own, beside the usual ones, in
one parse and in record order. The flattener files them under the key's column (`Part.alternates`), and the
converter puts both into dlt's columns (the rare values usually into a variant column, value by value
through dlt's coercion). The records' own bytes stay what the replay reads (`LineIndex.originals`).

Only changes between scalar types (number, string, boolean) are renamed, and only when the rare values are
strings or booleans (rare numbers may be read as doubles, which do not convert like the integers they may
have been); only keys that start with an ASCII byte and hold no escapes; and only where the key is certainly
a key: right after a `{` or a `,` (blanks between), since a quote inside a string is escaped. Anything else
goes to Python as before.

>>> from lakeload.kernel.normalize.arrow_lines import LineIndex
>>> lines = LineIndex.build(bytearray(b'{"a":1}\\n{"a":"x"}\\n'))
>>> aliases = {}
>>> rename_rare(lines, b"a", [9], ("number", "string"), 1, aliases), bytes(lines.data), aliases
(True, b'{"a":1}\\n{"\\x7f":"x"}\\n', {'\\x7f': 'a'})
>>> lines.line(1)
b'{"a":"x"}'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lakeload.kernel.normalize.arrow_lines import LineIndex

ALIAS_BYTE = 0x7F
SCALARS = frozenset(("number", "string", "boolean"))
RENAMED = frozenset(("string", "boolean"))  # the rare values' kinds that are renamed
_BLANKS = frozenset(b" \t\r\n")
_BEFORE_KEY = frozenset(b"{,")


def _after_key_start(data: bytes | bytearray, quote: int, start: int) -> bool:
    """Whether the quote at `quote` opens a key: a `{` or `,` before it in its record (from `start`), blanks between."""
    j = quote - 1
    while j >= start and data[j] in _BLANKS:
        j -= 1
    return j >= start and data[j] in _BEFORE_KEY


def rename_rare(
    lines: LineIndex, key: bytes, found: list[int], kinds: tuple[str, str], named: int, aliases: dict[str, str]
) -> bool:
    """Rename `key` at the positions `found` (their opening quotes; the values of the rare type) to its alias,
    recording it in `aliases` (alias -> key); False, and nothing changed, when that is not certain to be right.

    `kinds` are pyarrow's two kinds of the field (the usual one, then the rare one); `named` is the record
    pyarrow's error named, which must be among the renamed ones so that the next read gets further.
    """
    plain = key and key[0] < 0x80 and key[0] != ALIAS_BYTE and b"\\" not in key
    if not (plain and kinds[0] in SCALARS and kinds[1] in RENAMED):
        return False
    alias = bytes((ALIAS_BYTE,)) + key[1:]
    text = alias.decode("utf-8")
    if text in aliases or (bytes((ALIAS_BYTE,)) in lines.data and b'"' + alias + b'"' in lines.data):  # memchr first
        return False
    recs = lines.records_at(found)
    if named not in recs:
        return False
    if not all(_after_key_start(lines.data, pos, int(lines.starts[rec])) for pos, rec in zip(found, recs, strict=True)):
        return False
    if not isinstance(lines.data, bytearray):
        lines.data = bytearray(lines.data)
    data = lines.data
    for pos, rec in zip(found, recs, strict=True):
        if rec not in lines.originals:
            lines.originals[rec] = lines.line(rec)
        data[pos + 1] = ALIAS_BYTE
    aliases[text] = key.decode("utf-8")
    return True
