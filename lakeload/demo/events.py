"""Deterministic generator of nested, GitHub-like events for demos, tests and benchmarks.

The events are modelled on GitHub's public events API (``GET /events``): every event has an
``id``, a ``type``, nested ``actor`` / ``repo`` (and, in about half of them, ``org``) dicts, a
``payload`` whose shape depends on the type, plus a few extra fields that exercise a loader:

* ``tags`` - a list of strings (becomes a child table with a ``value`` column),
* ``reactions`` - a dict with keys such as ``"+1"`` and ``"-1"`` that need name normalization,
* ``external_ref`` - an ``int`` normally, but a non-numeric ``str`` in exactly 1% of the events
  (those whose global index ``start_id + i`` satisfies ``index % 100 == 99``), which makes dlt
  create a variant column.

The module is pure Python, has no third-party dependencies and does not import anything from
``lakeload`` (so benchmarks can load it by file path without importing the package).

Usage::

    from lakeload.demo.events import generate_events

    for event in generate_events(1_000, seed=0):
        ...

Generation takes roughly 10 µs per event on a laptop-class CPU and a serialized event is
about 1 KB of (compact) JSON; see ``tests/demo/test_events.py`` and
``bench/bench_vs_dlt.py --generator-only``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

__all__ = ["EVENT_TABLES", "EVENT_TYPES", "FLIP_EVERY", "generate_events", "is_flipped"]

EVENT_TABLES: dict[str, str] = {
    "events": "root table: one row per event; nested dicts (actor, repo, org, payload, "
    "reactions, payload.issue / payload.pull_request / payload.comment / payload.forkee ...) are "
    "flattened into columns such as actor__login, payload__pull_request__head__sha and "
    "reactions__x1 / reactions___1 (from the '+1' / '-1' keys); external_ref is bigint with a "
    "variant column external_ref__v_text for the 1% of rows where it is a string",
    "events__tags": "one row per element of `tags` (list of str -> column `value`)",
    "events__payload__commits": "one row per commit of a PushEvent (sha, author__name, "
    "author__email, message, distinct, url)",
    "events__payload__issue__labels": "one row per label of the issue of an IssuesEvent / "
    "IssueCommentEvent (id, name, color)",
    "events__payload__pull_request__labels": "one row per label of the pull request of a "
    "PullRequestEvent (id, name, color)",
}
"""Data tables dlt 1.31 builds from the events (resource name ``events``), verified by loading
1,000 events with dlt into a filesystem destination; dlt additionally writes its own
``_dlt_loads``, ``_dlt_pipeline_state`` and ``_dlt_version`` tables. Child tables carry
``_dlt_parent_id``, ``_dlt_list_idx``, ``_dlt_root_id`` and ``_dlt_id`` columns."""

# (type, cumulative weight out of 100); roughly the mix of GitHub's public timeline
_TYPE_WEIGHTS: tuple[tuple[str, int], ...] = (
    ("PushEvent", 40),
    ("PullRequestEvent", 52),
    ("IssuesEvent", 60),
    ("IssueCommentEvent", 70),
    ("WatchEvent", 85),
    ("CreateEvent", 93),
    ("ForkEvent", 97),
    ("DeleteEvent", 100),
)
EVENT_TYPES: tuple[str, ...] = tuple(t for t, _ in _TYPE_WEIGHTS)
"""All event types that :func:`generate_events` produces."""

_TYPE_BY_PERCENT: tuple[str, ...] = tuple(next(t for t, cum in _TYPE_WEIGHTS if w < cum) for w in range(100))

FLIP_EVERY = 100
"""``external_ref`` is a non-numeric string when ``(start_id + i) % FLIP_EVERY == FLIP_EVERY - 1``."""

_BASE_EVENT_ID = 40_000_000_000
_BASE_TIME = datetime(2026, 11, 21, 0, 0, 0, tzinfo=timezone.utc)

_WORDS = (
    "fix", "add", "update", "remove", "refactor", "bump", "improve", "support", "handle", "docs",
    "test", "build", "ci", "release", "parser", "loader", "schema", "normalize", "spark", "arrow",
    "parquet", "bucket", "table", "column", "variant", "nested", "list", "dict", "null", "type",
    "flip", "cache", "retry", "timeout", "error", "warning", "config", "pipeline", "resource",
    "source", "state", "incremental", "merge", "append", "replace", "staging", "dataset", "writer",
    "reader", "file", "chunk", "memory", "speed", "edge", "case", "typo", "readme", "example",
    "api", "client", "server", "auth", "token", "header", "request",
)  # fmt: skip
_FIRST_NAMES = (
    "ana", "bob", "chen", "dana", "eli", "fatima", "gus", "hana", "ivan", "jo", "kai", "lena", "mo",
    "nia", "omar", "pia", "quinn", "raj", "sara", "tom",
)  # fmt: skip
_LAST_NAMES = (
    "smith", "lee", "garcia", "kim", "novak", "muller", "rossi", "silva", "tanaka", "brown", "khan",
    "ivanova", "diaz", "cohen",
)  # fmt: skip
_BRANCHES = ("main", "master", "develop", "feature/loader", "fix/schema", "release/1.2", "dependabot/pip")
_LABELS = (
    ("bug", "d73a4a"),
    ("enhancement", "a2eeef"),
    ("documentation", "0075ca"),
    ("good first issue", "7057ff"),
    ("help wanted", "008672"),
    ("question", "d876e3"),
    ("wontfix", "ffffff"),
    ("duplicate", "cfd3d7"),
    ("dependencies", "0366d6"),
    ("performance", "fbca04"),
    ("breaking", "b60205"),
    ("triage", "ededed"),
)
_TAGS = (
    "python", "data", "etl", "spark", "arrow", "parquet", "cloud", "ml", "web", "cli",
    "rust", "go", "java", "typescript", "infra", "security", "docs", "testing",
)  # fmt: skip
_ISSUE_ACTIONS = ("opened", "closed", "reopened", "edited", "labeled")
_PR_ACTIONS = ("opened", "closed", "reopened", "synchronize", "ready_for_review")
_REF_TYPES = ("branch", "tag", "branch", "branch")


def _sentence(rng: random.Random, lo: int, hi: int) -> str:
    words = rng.choices(_WORDS, k=rng.randint(lo, hi))
    return " ".join(words).capitalize()


def _make_pools(rng: random.Random) -> dict[str, Any]:
    """Precomputes the (small) populations events are drawn from; keeps per-event work low."""
    actors = []
    for _ in range(2048):
        aid = rng.randint(1_000, 250_000_000)
        login = f"{rng.choice(_FIRST_NAMES)}-{rng.choice(_LAST_NAMES)}{rng.randint(0, 9999)}"
        actors.append((aid, login))
    orgs = []
    for _ in range(64):
        oid = rng.randint(1_000, 200_000_000)
        login = f"{rng.choice(_WORDS)}{rng.choice(_WORDS)}-org"
        orgs.append((oid, login))
    repos = []
    for _ in range(1024):
        rid = rng.randint(10_000, 900_000_000)
        owner = rng.choice(actors)[1] if rng.random() < 0.6 else rng.choice(orgs)[1]
        name = f"{owner}/{rng.choice(_WORDS)}-{rng.choice(_WORDS)}"
        repos.append((rid, name))
    authors = []
    for _ in range(256):
        first, last = rng.choice(_FIRST_NAMES), rng.choice(_LAST_NAMES)
        authors.append((f"{first.capitalize()} {last.capitalize()}", f"{first}.{last}@example.com"))
    return {
        "actors": actors,
        "orgs": orgs,
        "repos": repos,
        "authors": authors,
        "messages": [_sentence(rng, 2, 7) for _ in range(512)],
        "titles": [_sentence(rng, 3, 8) for _ in range(512)],
        "bodies": [_sentence(rng, 4, 12) + "." for _ in range(256)],
        "label_ids": [rng.randint(100_000, 9_000_000_000) for _ in _LABELS],
    }


def is_flipped(index: int) -> bool:
    """True when the event with global index ``index`` carries a string ``external_ref``."""
    return index % FLIP_EVERY == FLIP_EVERY - 1


def generate_events(n: int, seed: int = 0, start_id: int = 0) -> Iterator[dict[str, Any]]:
    """Yields ``n`` deterministic, nested GitHub-like events of about 1 KB of JSON each.

    Args:
        n: number of events to yield.
        seed: seed of the ``random.Random`` instance created for this call; the same
            ``(n, seed, start_id)`` always yields exactly the same events.
        start_id: global index of the first event. Event ``i`` gets ``id = 40_000_000_000 +
            start_id + i``, a ``created_at`` 3 s after its predecessor starting at
            2026-11-21T00:00:00Z, and a string ``external_ref`` when ``is_flipped(start_id + i)``.
            Use distinct ``start_id`` values to generate disjoint batches (random content is
            then drawn from ``random.Random(f"{seed}/{start_id}")``).

    Every event is a freshly built object (no dicts or lists are shared between events), so
    consumers may mutate them.
    """
    rng = random.Random(seed) if start_id == 0 else random.Random(f"{seed}/{start_id}")
    pools = _make_pools(rng)
    actors: list[tuple[int, str]] = pools["actors"]
    orgs: list[tuple[int, str]] = pools["orgs"]
    repos: list[tuple[int, str]] = pools["repos"]
    authors: list[tuple[str, str]] = pools["authors"]
    messages: list[str] = pools["messages"]
    titles: list[str] = pools["titles"]
    bodies: list[str] = pools["bodies"]
    label_ids: list[int] = pools["label_ids"]

    getrandbits = rng.getrandbits
    n_actors, n_orgs, n_repos, n_authors = len(actors), len(orgs), len(repos), len(authors)
    n_msgs, n_titles, n_bodies = len(messages), len(titles), len(bodies)
    n_labels, n_tags = len(_LABELS), len(_TAGS)

    def labels(bits: int) -> list[dict[str, Any]]:
        out = []
        for k in range(bits & 3):  # 0..3 labels
            li = ((bits >> (2 + 4 * k)) & 15) % n_labels
            name, color = _LABELS[li]
            out.append({"id": label_ids[li], "name": name, "color": color})
        return out

    def user(bits: int) -> dict[str, Any]:
        uid, ulogin = actors[bits % n_actors]
        return {"login": ulogin, "id": uid}

    day_cache: dict[int, str] = {}

    def iso(sec: int) -> str:
        """``_BASE_TIME + sec`` as ``YYYY-MM-DDTHH:MM:SSZ`` (dates cached, no strftime per call)."""
        day, rem = divmod(sec, 86400)
        day_str = day_cache.get(day)
        if day_str is None:
            if len(day_cache) > 64:
                day_cache.clear()
            day_str = day_cache[day] = (_BASE_TIME + timedelta(days=day)).strftime("%Y-%m-%d")
        return f"{day_str}T{rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}Z"

    for i in range(n):
        idx = start_id + i
        bits = getrandbits(64)
        sec = idx * 3 + (bits & 1)
        created_at = iso(sec)

        etype = _TYPE_BY_PERCENT[(bits >> 1) % 100]
        aid, login = actors[(bits >> 8) % n_actors]
        rid, rname = repos[(bits >> 20) % n_repos]
        repo_url = f"https://api.github.com/repos/{rname}"
        bits2 = getrandbits(64)

        if etype == "PushEvent":
            n_commits = 1 + ((bits2 & 3) == 3) + ((bits2 & 15) == 15)  # 1 (75%), 2, 3 (6%)
            commits = []
            for k in range(n_commits):
                sha = f"{getrandbits(160):040x}"
                aname, aemail = authors[(bits2 >> (2 + 8 * k)) % n_authors]
                commits.append(
                    {
                        "sha": sha,
                        "author": {"name": aname, "email": aemail},
                        "message": messages[(bits2 >> (5 + 8 * k)) % n_msgs],
                        "distinct": bool((bits2 >> (34 + k)) & 1) or k == 0,
                        "url": f"{repo_url}/commits/{sha}",
                    }
                )
            payload: dict[str, Any] = {
                "repository_id": rid,
                "push_id": 20_000_000_000 + idx,
                "size": n_commits,
                "distinct_size": sum(1 for c in commits if c["distinct"]),
                "ref": "refs/heads/" + _BRANCHES[(bits2 >> 40) % 7],
                "head": commits[-1]["sha"],
                "before": f"{getrandbits(160):040x}",
                "commits": commits,
            }
        elif etype == "PullRequestEvent":
            number = 1 + (bits2 & 0xFFF)
            merged = bool((bits2 >> 12) & 1)
            state = "closed" if merged else "open"
            payload = {
                "action": _PR_ACTIONS[(bits2 >> 13) % 5],
                "number": number,
                "pull_request": {
                    "id": 1_500_000_000 + idx,
                    "number": number,
                    "url": f"{repo_url}/pulls/{number}",
                    "state": state,
                    "title": titles[(bits2 >> 16) % n_titles],
                    "user": user(bits2 >> 25),
                    "body": bodies[(bits2 >> 37) % n_bodies] if (bits2 >> 45) & 3 else None,
                    "labels": labels(bits2 >> 47),
                    "created_at": iso(sec - 3600 - (bits2 & 0xFFFF)),
                    "merged": merged,
                    "draft": not merged and bool((bits2 >> 46) & 1),
                    "additions": (bits2 >> 20) & 0x3FF,
                    "deletions": (bits2 >> 30) & 0x1FF,
                    "changed_files": 1 + ((bits2 >> 40) & 0x1F),
                    "head": {"ref": _BRANCHES[(bits2 >> 42) % 7], "sha": f"{getrandbits(160):040x}"},
                    "base": {"ref": "main", "sha": f"{getrandbits(160):040x}"},
                },
            }
        elif etype == "IssuesEvent" or etype == "IssueCommentEvent":
            number = 1 + (bits2 & 0xFFF)
            issue = {
                "id": 2_500_000_000 + idx,
                "number": number,
                "url": f"{repo_url}/issues/{number}",
                "title": titles[(bits2 >> 12) % n_titles],
                "user": user(bits2 >> 21),
                "labels": labels(bits2 >> 33),
                "state": "open" if (bits2 >> 51) & 3 else "closed",
                "comments": (bits2 >> 53) & 0x3F,
                "created_at": iso(sec - 7200 - (bits2 & 0xFFFFF)),
                "body": bodies[(bits2 >> 45) % n_bodies] if etype == "IssuesEvent" else None,
            }
            if etype == "IssuesEvent":
                payload = {"action": _ISSUE_ACTIONS[(bits2 >> 59) % 5], "issue": issue}
            else:
                cid = 3_000_000_000 + idx
                payload = {
                    "action": "created",
                    "issue": issue,
                    "comment": {
                        "id": cid,
                        "html_url": f"https://github.com/{rname}/issues/{number}#issuecomment-{cid}",
                        "user": user(bits2 >> 27),
                        "body": bodies[(bits2 >> 39) % n_bodies],
                        "created_at": created_at,
                    },
                }
        elif etype == "WatchEvent":
            payload = {"action": "started"}
        elif etype == "CreateEvent":
            ref_type = _REF_TYPES[bits2 & 3]
            payload = {
                "ref": _BRANCHES[(bits2 >> 2) % 7]
                if ref_type == "branch"
                else f"v{bits2 >> 5 & 7}.{bits2 >> 8 & 31}.0",
                "ref_type": ref_type,
                "master_branch": "main",
                "description": titles[(bits2 >> 13) % n_titles],
                "pusher_type": "user",
            }
        elif etype == "ForkEvent":
            fid, flogin = actors[(bits2 >> 3) % n_actors]
            fname = rname.split("/", 1)[1]
            payload = {
                "forkee": {
                    "id": 700_000_000 + idx,
                    "name": fname,
                    "full_name": f"{flogin}/{fname}",
                    "private": False,
                    "owner": {"login": flogin, "id": fid},
                    "html_url": f"https://github.com/{flogin}/{fname}",
                    "description": titles[(bits2 >> 20) % n_titles],
                    "fork": True,
                    "created_at": created_at,
                    "stargazers_count": 0,
                }
            }
        else:  # DeleteEvent
            payload = {
                "ref": _BRANCHES[(bits2 >> 2) % 7],
                "ref_type": "branch",
                "pusher_type": "user",
            }

        tbits = bits >> 30
        tags = [_TAGS[(tbits >> (2 + 5 * k)) % n_tags] for k in range(tbits & 3)]
        rbits = getrandbits(40)
        event: dict[str, Any] = {
            "id": _BASE_EVENT_ID + idx,
            "type": etype,
            "actor": {
                "id": aid,
                "login": login,
                "display_login": login,
                "gravatar_id": "",
                "url": f"https://api.github.com/users/{login}",
                "avatar_url": f"https://avatars.githubusercontent.com/u/{aid}?",
            },
            "repo": {"id": rid, "name": rname, "url": repo_url},
            "payload": payload,
            "public": (bits >> 50) % 20 != 0,
            "created_at": created_at,
            "tags": tags,
            "reactions": {
                "+1": rbits & 0x1F,
                "-1": (rbits >> 5) & 3,
                "laugh": (rbits >> 7) & 7,
                "hooray": (rbits >> 10) & 7,
                "confused": (rbits >> 13) & 3,
                "heart": (rbits >> 15) & 0xF,
                "rocket": (rbits >> 19) & 7,
                "eyes": (rbits >> 22) & 7,
            },
            "external_ref": f"ext-{rbits >> 25:x}" if idx % FLIP_EVERY == FLIP_EVERY - 1 else rbits >> 25,
        }
        if (bits >> 56) & 1:
            oid, ologin = orgs[(bits >> 57) % n_orgs]
            event["org"] = {
                "id": oid,
                "login": ologin,
                "gravatar_id": "",
                "url": f"https://api.github.com/orgs/{ologin}",
                "avatar_url": f"https://avatars.githubusercontent.com/u/{oid}?",
            }
        yield event
