"""How a file source's files are cut into splits: near-equal byte ranges, shaped by the executors' parallelism."""

from __future__ import annotations

import heapq
import random

import pytest

from lakeload.extract.external import ExternalFile, ExternalFiles, byte_ranges, piece_ranges, split_entries
from lakeload.extract.split_shapes import MIN_PIECE_BYTES

MB = 1_000_000
MAX = 64 * 1024 * 1024


def lengths(sizes: list[int], parallelism: int | None, splittable: list[bool] | None = None) -> list[list[int]]:
    plans = piece_ranges(sizes, splittable or [True] * len(sizes), MAX, parallelism)
    return [[(size if end is None else end) - start for start, end in ranges] for ranges, size in zip(plans, sizes, strict=True)]


def mean_finish(pieces: list[int], parallelism: int, per_task: int = 3 * MB, spread: float = 0.3) -> float:
    """When the last of `pieces` (bytes, in task order) ends on `parallelism` executors that take the next task as
    they free up, each task costing its bytes times a random factor plus `per_task`: the mean over 300 draws (a
    model of its own, other numbers than the planner's)."""
    rng = random.Random(7)
    finishes = []
    for _ in range(300):
        free = [0.0] * parallelism
        for piece in pieces:
            heapq.heappush(free, heapq.heappop(free) + piece * rng.uniform(1 - spread, 1 + spread) + per_task)
        finishes.append(max(free))
    return sum(finishes) / len(finishes)


@pytest.mark.parametrize("seed", range(40))
def test_ranges_cover_each_file_once_in_order(seed: int) -> None:
    rng = random.Random(seed)
    sizes = [rng.choice([1, 1000, rng.randrange(1, 400 * MB)]) for _ in range(rng.randrange(1, 12))]
    splittable = [rng.random() > 0.2 for _ in sizes]
    parallelism = rng.choice([None, 1, 2, 3, 4, 8, 16])
    for ranges, size, can in zip(piece_ranges(sizes, splittable, MAX, parallelism), sizes, splittable, strict=True):
        assert ranges[0][0] == 0 and ranges[-1][1] is None
        assert all(end == ranges[i + 1][0] for i, (_, end) in enumerate(ranges[:-1]))  # contiguous
        assert all(end is not None and start < end < size for start, end in ranges[:-1])
        assert len(ranges) == 1 or (can and all(((end or size) - start) >= MIN_PIECE_BYTES for start, end in ranges))
        assert all(((end or size) - start) <= MAX for start, end in ranges) or len(ranges) == 1 and not can


def test_without_parallelism_files_are_cut_at_the_maximum_into_equal_ranges() -> None:
    assert lengths([140 * MB, 10 * MB], None) == [[46_666_666, 46_666_667, 46_666_667], [10 * MB]]
    assert piece_ranges([140 * MB], [True], MAX)[0] == byte_ranges(140 * MB, MAX)


def test_one_big_file_fills_every_executor() -> None:
    assert lengths([140 * MB], 2) == [[35 * MB] * 4]
    assert lengths([140 * MB], 4) == [[35 * MB] * 4]
    assert lengths([140 * MB], 8) == [[17_500_000] * 8]
    assert lengths([140 * MB], 16) == [[17_500_000] * 8]  # no piece under MIN_PIECE_BYTES: 8 of ~16.7 MiB
    assert lengths([20 * MB, 1000], 8) == [[20 * MB], [1000]]  # small files stay whole


def test_many_files_end_with_a_short_last_wave() -> None:
    eight = lengths([140 * MB] * 8, 2)
    assert [len(f) for f in eight] == [3] * 7 + [5]  # the job's last two pieces, of the last file, are halved
    assert eight[-1][1:] == [23_333_333, 23_333_334, 23_333_333, 23_333_334]


def test_gzip_files_are_never_cut() -> None:
    assert lengths([140 * MB, 140 * MB], 2, [False, True])[0] == [140 * MB]
    assert lengths([140 * MB], 8, [False]) == [[140 * MB]]


def test_without_a_known_parallelism_or_with_many_pieces_the_cut_is_plain() -> None:
    sizes = [140 * MB] * 400  # 1,200 pieces: more than the planner scores
    assert lengths(sizes, 2) == lengths(sizes, None) == [[46_666_666, 46_666_667, 46_666_667]] * 400
    assert lengths([140 * MB], 1) == lengths([140 * MB], None)


@pytest.mark.parametrize(
    ("sizes", "parallelism", "bound"),
    [
        ([140 * MB], 2, 0.9), ([140 * MB], 4, 0.85), ([140 * MB], 8, 0.5),  # executors the plain cut leaves idle
        ([100 * MB] * 2, 3, 0.9), ([140 * MB] * 3, 4, 0.95), ([1000 * MB], 8, 0.97),
        ([140 * MB] * 8, 2, 1.0), ([300 * MB, 50 * MB, 5 * MB], 2, 1.005), ([70 * MB, 900 * MB], 16, 1.005),
    ],
)
def test_the_shaped_splits_end_sooner(sizes: list[int], parallelism: int, bound: float) -> None:
    """Measured against a model of the job other than the planner's (its own draws, spread and task cost)."""
    before = mean_finish([n for f in lengths(sizes, None) for n in f], parallelism)
    after = mean_finish([n for f in lengths(sizes, parallelism) for n in f], parallelism)
    assert after < before * bound


def test_split_entries_follow_the_items_parallelism() -> None:
    files = [ExternalFile(f"file:///data/{i}.jsonl", f"/data/{i}.jsonl", 140 * MB, "v1") for i in range(2)]
    files.append(ExternalFile("file:///data/empty.jsonl", "/data/empty.jsonl", 0, "v1"))
    shaped = split_entries(ExternalFiles("file:///data", files, parallelism=2), "events", MAX)
    plain = split_entries(ExternalFiles("file:///data", files), "events", MAX)
    assert len(plain) == 6 and len(shaped) == 8
    ranges = [(e["source"]["path"], e["source"]["start"], e["source"]["end"]) for e in shaped]
    assert ranges[:3] == [(e["source"]["path"], e["source"]["start"], e["source"]["end"]) for e in plain[:3]]
    assert ranges[-1] == ("/data/1.jsonl", 116_666_666, None)
    assert {e["path"] for e in shaped} == {"file:///data/0.jsonl", "file:///data/1.jsonl"}  # the empty file: no split
