#!/usr/bin/env bash
# Lint and run lakeload's test suite: scripts/test.sh [pytest args...], e.g. scripts/test.sh tests/cli -x
# Sets up .venv (and Java 17+) first; exits with pytest's code (5, "no tests collected", is a failure too).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
.venv/bin/python -m ruff check lakeload tests
exec .venv/bin/python -m pytest tests -q -ra -p no:cacheprovider "$@"
