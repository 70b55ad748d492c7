#!/usr/bin/env bash
# Set up lakeload's development environment; safe to run again (it then does nothing and prints nothing).
#
#   1. Java 17+ for Apache Spark: kept if `java` on PATH or $JAVA_HOME is 17+; otherwise installed with
#      apt-get when running as root, or this script says how to install it and exits 1.
#   2. .venv in the repository root (python3 -m venv), with `pip install -e ".[test]"`. The install is
#      skipped while .venv/.lakeload-installed holds the sha256 of pyproject.toml.
#   3. Azurite (the Azure Blob Storage emulator the tests start, see tests/servers/) from the npm
#      registry into .tools/node_modules; skipped while .tools/node_modules/.bin/azurite-blob exists.
#      Needs Node.js and npm.
#   4. Chromium and ChromeDriver (Debian's chromium, chromium-driver) for the dashboard test, with apt-get
#      when running as root; skipped while both are on PATH.
#
# Environment: PYTHON (default python3) is the interpreter the venv is created from.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.lakeload-installed"
PYTHON="${PYTHON:-python3}"
JAVA_MIN=17

note() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

# Run a command with its output kept back; show the output only if the command fails.
quiet() {
    local log status=0
    log="$(mktemp)"
    "$@" >"$log" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        cat "$log" >&2
        echo "setup: error: '$*' failed (exit $status)" >&2
    fi
    rm -f "$log"
    return "$status"
}

# Major version of a java binary ("17" for 17.0.15, "8" for 1.8.0_392); empty when it does not run.
java_major() {
    local out major minor
    out="$("$1" -version 2>&1)" || return 0
    read -r major minor < <(printf '%s\n' "$out" | sed -n 's/.*version "\([0-9][0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2/p' | head -n 1) || true
    if [ "${major:-}" = "1" ]; then major="${minor:-}"; fi
    printf '%s' "${major:-}"
}

# Succeeds when `java` on PATH or $JAVA_HOME/bin/java is Java 17+; sets JAVA_FOUND to what was seen.
have_java() {
    local candidate version ok=1
    JAVA_FOUND=""
    for candidate in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} "$(command -v java || true)"; do
        [ -n "$candidate" ] && [ -x "$candidate" ] || continue
        version="$(java_major "$candidate")"
        JAVA_FOUND="${JAVA_FOUND:+$JAVA_FOUND, }$candidate is Java ${version:-of unknown version}"
        if [ -n "$version" ] && [ "$version" -ge "$JAVA_MIN" ]; then ok=0; fi
    done
    [ -n "$JAVA_FOUND" ] || JAVA_FOUND="no java on PATH${JAVA_HOME:+ or in JAVA_HOME=$JAVA_HOME}"
    return "$ok"
}

java_help() {
    cat >&2 <<EOF
lakeload runs Apache Spark, which needs Java $JAVA_MIN or newer ($JAVA_FOUND).
Install it, then run this script again:
  Debian/Ubuntu:  sudo apt-get update && sudo apt-get install -y openjdk-17-jre-headless
                  (no openjdk-17 package? sudo apt-get install -y default-jre-headless)
  macOS:          brew install openjdk@17
  other systems:  any JDK/JRE 17+; put its bin/ on PATH or set JAVA_HOME to it.
EOF
}

ensure_java() {
    if have_java; then
        if [ -n "${JAVA_HOME:-}" ]; then
            local v
            v="$(java_major "$JAVA_HOME/bin/java" 2>/dev/null || true)"
            if [ -z "$v" ] || [ "$v" -lt "$JAVA_MIN" ]; then
                note "warning: JAVA_HOME=$JAVA_HOME is not Java $JAVA_MIN+ and Spark uses it first; unset JAVA_HOME or point it to Java $JAVA_MIN+"
            fi
        fi
        return 0
    fi
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        java_help
        exit 1
    fi
    local package=openjdk-17-jre-headless
    note "installing Java $JAVA_MIN with apt-get ($JAVA_FOUND)"
    export DEBIAN_FRONTEND=noninteractive
    quiet apt-get update -qq
    if ! apt-cache show "$package" >/dev/null 2>&1; then
        package=default-jre-headless
    fi
    quiet apt-get install -y -qq "$package"
    hash -r
    have_java || { java_help; die "installed $package, but still no Java $JAVA_MIN+"; }
}

venv_ok() { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -m pip --version >/dev/null 2>&1; }

ensure_venv() {
    venv_ok && return 0
    command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found; install Python 3.10+ (or set PYTHON=/path/to/python3)"
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
        || die "lakeload needs Python 3.10+; $PYTHON is $("$PYTHON" --version 2>&1)"
    note "creating $VENV"
    rm -f "$STAMP"
    if ! quiet "$PYTHON" -m venv --clear "$VENV"; then
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
            note "installing python3-venv with apt-get"
            quiet apt-get update -qq
            DEBIAN_FRONTEND=noninteractive quiet apt-get install -y -qq python3-venv
            quiet "$PYTHON" -m venv --clear "$VENV"
        else
            die "'$PYTHON -m venv' failed; on Debian/Ubuntu: sudo apt-get install -y python3-venv"
        fi
    fi
    venv_ok || die "$VENV has no working pip"
}

ensure_installed() {
    local want
    want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
    if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/lakeload" ]; then
        return 0
    fi
    note "installing lakeload[test] into $VENV"
    export PIP_DISABLE_PIP_VERSION_CHECK=1
    quiet "$VENV/bin/python" -m pip install -q --upgrade pip
    (cd "$ROOT" && quiet "$VENV/bin/python" -m pip install -q -e ".[test]")
    printf '%s\n' "$want" >"$STAMP"
}

# 3.37.0 is the first Azurite that honours List Blobs' `startFrom`: delta-rs lists the Delta log from the
# version it has, and an older Azurite returns the whole log, which breaks every commit after version 1.
AZURITE_MIN="3.37.0"
AZURITE_SPEC="azurite@^$AZURITE_MIN"
TOOLS="$ROOT/.tools"

azurite_is_current() {
    [ -x "$TOOLS/node_modules/.bin/azurite-blob" ] || return 1
    node -e 'const [a, b] = process.argv.slice(1).map(v => v.split(".").map(Number));
        const order = a[0] - b[0] || a[1] - b[1] || a[2] - b[2]; process.exit(order < 0 ? 1 : 0);' \
        "$(node -p "require('$TOOLS/node_modules/azurite/package.json').version" 2>/dev/null || echo 0.0.0)" \
        "$AZURITE_MIN" 2>/dev/null
}

ensure_azurite() {
    azurite_is_current && return 0
    if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
        die "the tests need Azurite (Azure Blob Storage emulator) from npm, but node/npm are missing; install Node.js 18+ with npm (Debian/Ubuntu: sudo apt-get install -y nodejs npm), then run this script again"
    fi
    note "installing $AZURITE_SPEC into $TOOLS"
    mkdir -p "$TOOLS"
    quiet npm install --prefix "$TOOLS" "$AZURITE_SPEC" --no-audit --no-fund --silent
    [ -x "$TOOLS/node_modules/.bin/azurite-blob" ] || die "npm installed $AZURITE_SPEC, but $TOOLS/node_modules/.bin/azurite-blob is missing"
}

# Chromium and its driver for the dashboard test (tests/dashboard drives a real headless Chromium).
ensure_chromium() {
    if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        die "the dashboard test needs Chromium and ChromeDriver; on Debian/Ubuntu: sudo apt-get install -y chromium chromium-driver, then run this script again"
    fi
    note "installing chromium and chromium-driver with apt-get (for tests/dashboard)"
    export DEBIAN_FRONTEND=noninteractive
    quiet apt-get update -qq
    quiet apt-get install -y -qq chromium chromium-driver
}

ensure_java
ensure_venv
ensure_installed
ensure_azurite
ensure_chromium
