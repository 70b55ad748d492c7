#!/usr/bin/env bash
# Run the lakeload demo: 100k GitHub-like events into ./_storage on local Spark, row counts via DuckDB.
# Sets up .venv (and Java 17+) first; arguments go to `lakeload demo` (see scripts/demo.sh --help).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
exec "$ROOT/.venv/bin/lakeload" demo "$@"
