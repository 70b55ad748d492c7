"""Finding a key's occurrences in a split's bytes: the rarest-byte search equals a plain regular expression."""

from __future__ import annotations

import random
import re

import pytest

from lakeload.kernel.normalize.arrow_read import key_positions

KEYS = [b"external_ref", b"id", b"a.b", b"x+y", b"ref", b"_ref", b"\xc3\xa9t\xc3\xa9", b"q", b""]
TAILS = [rb'\s*:\s*"', rb"\s*:\s*[-0-9]", rb"\s*:"]


def plain(data: bytes, key: bytes, tail: bytes) -> list[int]:
    return [m.start() for m in re.finditer(rb'"' + re.escape(key) + rb'"' + tail, data)]


def random_lines(rng: random.Random) -> bytes:
    out = []
    for _ in range(rng.randint(0, 40)):
        fields = []
        for key in rng.sample(KEYS, rng.randint(0, 4)):
            space = rng.choice([b"", b" ", b"\t ", b"\n"])
            value = rng.choice([b"1", b"-2", b'"s"', b'"external_ref"', b"null", b"[1]", b'{"id":3}'])
            fields.append(b'"' + key + b'"' + space + b":" + space + value)
        out.append(b"{" + b",".join(fields) + b"}")
    return b"\n".join(out)


@pytest.mark.parametrize("seed", range(30))
def test_key_positions_equal_a_plain_search(seed: int) -> None:
    data = random_lines(random.Random(seed))
    for key in KEYS:
        for tail in TAILS:
            assert key_positions(data, key, tail) == plain(data, key, tail), (key, tail)
            assert key_positions(bytearray(data), key, tail) == plain(data, key, tail)


def test_a_longer_key_ending_in_the_key_is_not_a_match() -> None:
    data = b'{"my_external_ref":"a","external_ref":"b"}\n{"xexternal_ref":"c"}'
    assert key_positions(data, b"external_ref", rb'\s*:\s*"') == [23]
    assert key_positions(b'"external_ref":"x"', b"external_ref", rb":") == [0]  # at the very start
