#!/usr/bin/env sh
# Run the MCP tests against the other major of the mcp SDK (1.x; .venv has 2.x from the dev extra).
#
# The packages of tests/support/mcp1-requirements.txt go --no-deps into one directory that is put in
# front of .venv's site-packages (PYTHONPATH), so everything else is .venv's own and the install is a
# few small wheels. The directory is reused while the requirements file is unchanged.
#   sh tests/support/mcp_env.sh [pytest args...]        (MCP1_DIR: where; default /tmp/agentchaos-mcp1)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
DIR=${MCP1_DIR:-/tmp/agentchaos-mcp1}
REQ=$ROOT/tests/support/mcp1-requirements.txt
if ! cmp -s "$REQ" "$DIR/.requirements" 2>/dev/null; then
  rm -rf "$DIR"
  "$PY" -m pip install --quiet --disable-pip-version-check --no-deps --target "$DIR" -r "$REQ"
  cp "$REQ" "$DIR/.requirements"
fi
cd "$ROOT"
PYTHONPATH="$DIR${PYTHONPATH:+:$PYTHONPATH}" exec "$PY" -m pytest -p no:cacheprovider tests/agentchaos_otel/mcp "$@"
