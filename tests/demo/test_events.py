"""Fast tests of the deterministic GitHub-like event generator (no Spark, no dlt)."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from lakeload.demo.events import EVENT_TABLES, EVENT_TYPES, FLIP_EVERY, generate_events, is_flipped

ISO_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
N = 2_000


@pytest.fixture(scope="module")
def events() -> list[dict[str, Any]]:
    return list(generate_events(N, seed=0))


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def test_count_and_ids(events: list[dict[str, Any]]) -> None:
    assert len(events) == N
    ids = [e["id"] for e in events]
    assert all(isinstance(i, int) for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == N
    assert list(generate_events(0)) == []


def test_deterministic_with_same_seed(events: list[dict[str, Any]]) -> None:
    again = list(generate_events(N, seed=0))
    assert _dumps(again) == _dumps(events)
    # a prefix is the same regardless of n
    assert _dumps(list(generate_events(10, seed=0))) == _dumps(events[:10])


def test_different_seed_or_start_id_differs(events: list[dict[str, Any]]) -> None:
    other = list(generate_events(50, seed=1))
    assert _dumps(other) != _dumps(events[:50])
    assert [e["id"] for e in other] == [e["id"] for e in events[:50]]
    shifted = list(generate_events(50, seed=0, start_id=1_000))
    assert [e["id"] for e in shifted] == [events[0]["id"] + 1_000 + i for i in range(50)]
    assert _dumps(shifted) == _dumps(list(generate_events(50, seed=0, start_id=1_000)))


def test_mean_size_about_1kb(events: list[dict[str, Any]]) -> None:
    sizes = [len(json.dumps(e, separators=(",", ":"))) for e in events]
    mean = sum(sizes) / len(sizes)
    assert 800 <= mean <= 1_300, mean


def test_top_level_keys_and_types(events: list[dict[str, Any]]) -> None:
    required = {"id", "type", "actor", "repo", "payload", "public", "created_at", "tags", "reactions"}
    for e in events:
        assert required <= e.keys()
        assert set(e) - required <= {"org", "external_ref"}
        assert e["type"] in EVENT_TYPES
        assert isinstance(e["public"], bool)
        assert ISO_Z.match(e["created_at"]), e["created_at"]
        assert set(e["actor"]) == {"id", "login", "display_login", "gravatar_id", "url", "avatar_url"}
        assert set(e["repo"]) == {"id", "name", "url"}
        assert isinstance(e["tags"], list) and all(isinstance(t, str) for t in e["tags"])
        assert {"+1", "-1", "laugh"} <= e["reactions"].keys()
        assert all(isinstance(v, int) for v in e["reactions"].values())
        assert isinstance(e["payload"], dict)


def test_created_at_is_non_decreasing(events: list[dict[str, Any]]) -> None:
    stamps = [e["created_at"] for e in events]
    assert stamps == sorted(stamps)
    assert stamps[0].startswith("2026-11-21T")


def test_org_in_about_half(events: list[dict[str, Any]]) -> None:
    share = sum("org" in e for e in events) / N
    assert 0.4 <= share <= 0.6
    for e in events:
        if "org" in e:
            assert {"id", "login", "url", "avatar_url"} <= e["org"].keys()


def test_type_flip_one_percent(events: list[dict[str, Any]]) -> None:
    flipped = [i for i, e in enumerate(events) if isinstance(e["external_ref"], str)]
    assert len(flipped) == N // FLIP_EVERY
    assert flipped == [i for i in range(N) if is_flipped(i)]
    assert 0 not in flipped  # the first event fixes the column type as int
    for i, e in enumerate(events):
        ref = e["external_ref"]
        if i in flipped:
            assert not ref.lstrip("-").isdigit()
        else:
            assert isinstance(ref, int) and not isinstance(ref, bool)
    # deterministic by global index
    shifted = list(generate_events(FLIP_EVERY, seed=0, start_id=FLIP_EVERY // 2))
    assert [isinstance(e["external_ref"], str) for e in shifted].index(True) == FLIP_EVERY // 2 - 1


def test_type_mix_and_nested_payloads(events: list[dict[str, Any]]) -> None:
    counts = Counter(e["type"] for e in events)
    assert set(counts) == set(EVENT_TYPES)
    assert counts["PushEvent"] == max(counts.values())
    for e in events:
        payload = e["payload"]
        if e["type"] == "PushEvent":
            assert payload["commits"] and payload["size"] == len(payload["commits"])
            for c in payload["commits"]:
                assert set(c) == {"sha", "author", "message", "distinct", "url"}
                assert set(c["author"]) == {"name", "email"}
                assert len(c["sha"]) == 40
        elif e["type"] == "PullRequestEvent":
            for label in payload["pull_request"]["labels"]:
                assert set(label) == {"id", "name", "color"}
        elif e["type"] in ("IssuesEvent", "IssueCommentEvent"):
            for label in payload["issue"]["labels"]:
                assert set(label) == {"id", "name", "color"}
    assert any(e["payload"].get("issue", {}).get("labels") for e in events)
    assert any(e["payload"].get("pull_request", {}).get("labels") for e in events)
    assert any(e["tags"] for e in events) and any(not e["tags"] for e in events)


def test_events_do_not_share_objects() -> None:
    """Consumers may mutate events: no dict or list is shared between (or within) events."""
    seen: set[int] = set()
    evs = list(generate_events(300))

    def walk(obj: Any) -> None:
        if isinstance(obj, (dict, list)):
            assert id(obj) not in seen
            seen.add(id(obj))
            for child in obj.values() if isinstance(obj, dict) else obj:
                walk(child)

    for e in evs:
        walk(e)


def test_event_tables_documented() -> None:
    assert "events" in EVENT_TABLES
    assert {"events__tags", "events__payload__commits"} <= EVENT_TABLES.keys()
