#!/usr/bin/env bash
# Set up and run every test on a fresh machine (Python 3.11; Debian's prometheus package): the
# README's test command, and what CI runs on a clean clone. Each step says what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."

# The metrics panels' test scrapes real runs with a real Prometheus.
if ! command -v prometheus >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q prometheus
  else sudo apt-get update -q && sudo apt-get install -y -q prometheus; fi
fi

# The project with every extra, at the exact versions of constraints.txt (docs/install.md).
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -c constraints.txt -e ".[dev]"
# The BFCL harness without the dependencies bfcl-eval declares and never imports.
.venv/bin/pip install -q --no-deps -r agentchaos_otel/agents/bfcl/requirements-bfcl.txt
# Phoenix for the annotation round trip, in its own environment (its pins conflict with dev).
[ -x .phoenix-venv/bin/python ] || { python3 -m venv .phoenix-venv && .phoenix-venv/bin/pip install -q -r tests/support/phoenix-requirements.txt; }

.venv/bin/ruff check .
.venv/bin/lint-imports
.venv/bin/mkdocs build --strict --quiet
# The project installs beside the current release of each agent framework (pip resolves, installs nothing).
.venv/bin/python tests/support/resolution.py
.venv/bin/pytest
# The MCP tests again on the SDK's other major (1.x).
sh tests/support/mcp_env.sh -q
# The framework matrix: five agent frameworks x four ways in, in a virtualenv of their own.
.venv/bin/python tests/support/frameworks.py
