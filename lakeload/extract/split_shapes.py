"""How a file source's files are cut for the executors that read them: candidate cuts, compared by when their
tasks would end.

Files are cut into near-equal byte ranges of at most `file_max_bytes` (the plain cut). With the executors'
parallelism P known, three more cuts are candidates, none with a piece under `MIN_PIECE_BYTES`:
- full waves: the widest pieces are cut again until the number of pieces is a multiple of P (at least P), so
  that one 140 MB file keeps 2, 4 or 8 executors busy instead of 3;
- short last wave: the job's last P pieces are cut in halves, so that executors finishing at different times
  (task times vary) wait less for the last one;
- both.

Each cut is scored by a model of the job: executors take the next piece in order as they free up; a task costs
its bytes times a factor drawn in 1 ± `SPREAD` (from a seeded generator: the same files give the same splits on
every run) plus `TASK_COST_BYTES`; the score is the mean finish over `DRAWS` draws. The best score wins; a tie goes to
the cut with fewer pieces. More than `MAX_SCORED` pieces keep the plain cut.

>>> [len(ranges) for ranges in shape([140_000_000], [True], [3], 4)]
[4]
"""

from __future__ import annotations

import heapq
import random

MIN_PIECE_BYTES = 16 * 1024 * 1024
TASK_COST_BYTES = 2 * 1024 * 1024  # a task's own cost (start, per-table writers, files), in bytes of parsing
SPREAD = 0.25
DRAWS = 24
MAX_SCORED = 1024

Pieces = list[list[tuple[int, int]]]


def even(size: int, count: int) -> list[tuple[int, int]]:
    """`count` near-equal `[start, end)` ranges covering `size` bytes."""
    starts = [size * i // count for i in range(count)] + [size]
    return list(zip(starts, starts[1:], strict=False))


def shape(sizes: list[int], splittable: list[bool], counts: list[int], parallelism: int | None) -> Pieces:
    """The ranges of each file: the plain cut (`counts` pieces per file) or the best candidate for `parallelism`."""
    plain = [even(size, count) for size, count in zip(sizes, counts, strict=True)]
    if parallelism is None or parallelism < 2 or sum(counts) > MAX_SCORED:
        return plain
    waves = _full_waves(sizes, splittable, counts, parallelism)
    candidates = [plain, waves, _short_last_wave(plain, splittable, parallelism), _short_last_wave(waves, splittable, parallelism)]
    scores = [(_score(pieces, parallelism), sum(map(len, pieces)), i) for i, pieces in enumerate(candidates)]
    return candidates[min(scores)[2]]


def _full_waves(sizes: list[int], splittable: list[bool], counts: list[int], parallelism: int) -> Pieces:
    counts = list(counts)
    target = max(parallelism, -(-sum(counts) // parallelism) * parallelism)
    while sum(counts) < target:
        cuttable = [i for i, can in enumerate(splittable) if can and sizes[i] // (counts[i] + 1) >= MIN_PIECE_BYTES]
        if not cuttable:
            break
        counts[max(cuttable, key=lambda i: sizes[i] / counts[i])] += 1
    return [even(size, count) for size, count in zip(sizes, counts, strict=True)]


def _short_last_wave(pieces: Pieces, splittable: list[bool], parallelism: int) -> Pieces:
    """`pieces` with the last `parallelism` of them (in task order) halved where halves are big enough."""
    if sum(map(len, pieces)) <= parallelism:
        return pieces
    shaped = [list(ranges) for ranges in pieces]
    left = parallelism
    for ranges, can in zip(reversed(shaped), reversed(splittable), strict=True):
        for j in range(len(ranges) - 1, -1, -1):
            if left == 0:
                return shaped
            left -= 1
            start, end = ranges[j]
            if can and end - start >= 2 * MIN_PIECE_BYTES:
                ranges[j : j + 1] = [(start, (start + end) // 2), ((start + end) // 2, end)]
    return shaped


def _score(pieces: Pieces, parallelism: int) -> float:
    """The mean time at which the last task ends (in bytes of work), over seeded draws of task times."""
    lengths = [end - start for ranges in pieces for start, end in ranges]
    rng = random.Random(0)
    total = 0.0
    for _ in range(DRAWS):
        free = [0.0] * parallelism
        for length in lengths:
            heapq.heappush(free, heapq.heappop(free) + length * (1 + SPREAD * (2 * rng.random() - 1)) + TASK_COST_BYTES)
        total += max(free)
    return total / DRAWS
