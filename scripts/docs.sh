#!/usr/bin/env bash
# Serve the documentation site (mkdocs.yml, docs/) on http://127.0.0.1:8000, rebuilt on every change of a page
# or of the code the reference pages are generated from. Sets up .venv first. Extra arguments go to `mkdocs serve`
# (e.g. `scripts/docs.sh -a 0.0.0.0:8000`); `scripts/test.sh` builds the same site with --strict.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
export NO_MKDOCS_2_WARNING=1
exec .venv/bin/mkdocs serve --watch lakeload --watch pyproject.toml "$@"
