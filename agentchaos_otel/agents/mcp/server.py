"""The reference agent's tools served over MCP, each with the annotations that describe it.

The tools are the reference agent's (``sim/reference_tasks.py``: simulated data, labelled so in
every result); ``book_flight`` books again on every call, so it says ``destructiveHint`` and not
``idempotentHint``; every other tool only reads (``readOnlyHint``). The server is a plain SDK server
(1.x FastMCP or 2.x MCPServer) and runs in its own process:

    python -m agentchaos_otel.agents.mcp.server stdio
    python -m agentchaos_otel.agents.mcp.server http PORT

``ServerProcess`` starts one for a campaign (Streamable HTTP on a loopback port) and stops it with
the campaign.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import weakref
from typing import Any

from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, TOOL_SPECS

NOT_IDEMPOTENT = ("book_flight",)
START_TIMEOUT_S = 60.0


def annotations(name: str) -> dict[str, bool]:
    """The MCP tool annotations of a reference tool."""
    if name in NOT_IDEMPOTENT:
        return {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False}
    return {"readOnlyHint": True, "openWorldHint": False}


def build() -> Any:
    """The MCP server object (not started)."""
    from mcp.types import ToolAnnotations

    try:
        from mcp.server.mcpserver import MCPServer as Server  # 2.x
    except ImportError:  # 1.x
        from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]

    srv = Server("agentchaos-reference-tools")
    for name, fn in REFERENCE_TOOLS.items():
        description = TOOL_SPECS[name]["function"]["description"]
        srv.tool(name=name, description=description, annotations=ToolAnnotations(**annotations(name)))(fn)
    return srv


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """One Streamable HTTP server process, started on first use and stopped with this object."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._url: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def url(self) -> str:
        with self._lock:
            if self._url is None:
                self._url = self._start()
            return self._url

    def _start(self) -> str:
        port = _free_port()
        proc = subprocess.Popen([sys.executable, "-m", "agentchaos_otel.agents.mcp.server", "http", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._proc = proc
        weakref.finalize(self, _stop, proc)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return f"http://127.0.0.1:{port}/mcp"
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"the MCP tool server exited with status {proc.returncode}") from None
                if time.monotonic() > deadline:
                    _stop(proc)
                    raise RuntimeError(f"the MCP tool server did not listen within {START_TIMEOUT_S:.0f} s") from None
                time.sleep(0.05)

    def stop(self) -> None:
        with self._lock:
            if self._proc is not None:
                _stop(self._proc)
            self._proc, self._url = None, None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main(argv: list[str]) -> None:
    srv = build()
    if not argv or argv[0] == "stdio":
        srv.run("stdio")
        return
    port = int(argv[1])
    if type(srv).__name__ == "FastMCP":  # 1.x: host and port are settings
        srv.settings.host, srv.settings.port, srv.settings.log_level = "127.0.0.1", port, "WARNING"
        srv.run("streamable-http")
    else:
        srv.run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main(sys.argv[1:])
