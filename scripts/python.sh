#!/usr/bin/env bash
# Installs the official MCP Python client (PyPI `mcp`, pinned in tests/e2e/python/requirements.txt)
# into the project-local virtualenv .tools/py, for the Python end-to-end spec. Never system-wide.
# Does nothing when the virtualenv already holds exactly the pinned requirements.
#
# Exit status: 0 ready; 3 the package index is unreachable (the spec skips, loudly, unless
# REQUIRE_ALL_SUITES=1); anything else is a failure (a broken pin, a missing interpreter).
# Prints the virtualenv's python on success.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv="$root/.tools/py"
req="$root/tests/e2e/python/requirements.txt"
stamp="$venv/.requirements.sha256"

say() { printf '[python] %s\n' "$*" >&2; }

want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "$venv/bin/python"
    exit 0
fi

# The SDK needs Python 3.10 or later; take the newest interpreter on PATH that qualifies.
python=""
for candidate in python3.13 python3.12 python3.11 python3.10 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
        "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
        python=$candidate
        break
    fi
done
if [ -z "$python" ]; then
    say "no Python 3.10+ on PATH: the MCP Python client needs one"
    exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
    say "creating the virtualenv .tools/py with $python"
    "$python" -m venv "$venv"
fi
rm -f "$stamp"
say "installing tests/e2e/python/requirements.txt into .tools/py"
if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$req" >&2; then
    # Tell an unreachable index (skip) from a broken install (fail): ask the index pip used.
    if ! "$venv/bin/python" - "${PIP_INDEX_URL:-https://pypi.org/simple}" <<'PY' 2>/dev/null
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/mcp/", timeout=10).read(1)
PY
    then
        say "################################################################"
        say "PyPI is unreachable: the MCP Python client is NOT installed and"
        say "the Python end-to-end spec will be SKIPPED."
        say "################################################################"
        exit 3
    fi
    say "pip install failed although PyPI answers"
    exit 1
fi
echo "$want" > "$stamp"
echo "$venv/bin/python"
