#!/usr/bin/env bash
# Minimal install of bfcl-eval for the multi-turn harness (see requirements-bfcl.txt for why
# --no-deps). Idempotent; uses the venv's pip unless PIP is set.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
pip="${PIP:-$root/.venv/bin/pip}"
cd "$root"
"$pip" install --quiet --no-deps -r "$here/requirements-bfcl.txt"
"${PYTHON:-$root/.venv/bin/python}" -c "from agentchaos_otel.agents.bfcl import bfcl_available as a; import sys; sys.exit(0 if a() else 1)" \
  || { echo "bfcl-eval installed but the harness cannot import it" >&2; exit 1; }
