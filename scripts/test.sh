#!/usr/bin/env bash
# Lint (ruff, the import contracts, mypy), run the docstring examples and lakeload's test suite. Sets up .venv (and Java 17+)
# first; exits with the first failing check's code, else pytest's (5, "no tests collected", is a failure too). Extra arguments go to pytest; when the first one is a
# path, only those paths run instead of all of tests/:
#   scripts/test.sh                       # everything
#   scripts/test.sh -x -k parquet         # everything, pytest options
#   scripts/test.sh tests/cli -x          # one folder
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
.venv/bin/python -m ruff check lakeload tests docs
.venv/bin/lint-imports --no-cache          # the layer contracts in pyproject.toml ([tool.importlinter])
.venv/bin/python -m mypy lakeload
# --strict itself on the executor-safe layers and the typed contracts (the modules of [[tool.mypy.overrides]] in
# pyproject.toml, which give `mypy lakeload` the same flags there; this adds the global ones, e.g. redundant casts)
.venv/bin/python -m mypy --strict --follow-imports=silent lakeload/kernel lakeload/common lakeload/schema \
    lakeload/storage/manifest.py lakeload/destinations/state_types.py lakeload/extract/hint_types.py \
    lakeload/config/open_types.py lakeload/destinations/reference.py lakeload/destinations/impl/filesystem/table_format.py \
    lakeload/destinations/package_types.py lakeload/delta/snapshot_files.py
# the docstring examples (~10 s; they start no Spark, open no socket and write only to temporary folders)
.venv/bin/python -m pytest --doctest-modules lakeload -q -p no:cacheprovider -n 0
# the documentation site (mkdocs.yml, docs/): a broken page, link, anchor or generated reference page fails here
# (~3 s; built into a temporary folder; tests/docs runs the examples in it)
site_dir="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir "$site_dir"
rm -rf "$site_dir"

targets=(tests)
if [ "$#" -gt 0 ] && [ -e "${1%%::*}" ]; then
    targets=()
fi
# two test processes (pytest-xdist), a test file each at a time: the suite waits on py4j, Python workers and child
# processes enough that two keep 2 cores busy (12:28 instead of 21:52). `-n 0` after it runs in one process.
exec .venv/bin/python -m pytest ${targets[@]+"${targets[@]}"} -q -ra -p no:cacheprovider \
    -n "${LAKELOAD_TEST_WORKERS:-2}" --dist loadfile "$@"
