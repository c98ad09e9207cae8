"""Real MCP servers and client sessions for the tests, on whichever major of the SDK is installed.

The server (``tests/support/mcp_server.py``) runs as its own process over stdio or Streamable
HTTP on a loopback port; sessions are the SDK's ``ClientSession`` over its own transports, used
the way an agent uses them. ``MAJOR`` and the small helpers hide what differs between 1.x and 2.x
(the HTTP transport's third stream, timeouts as ``timedelta`` or seconds).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from tests.support import REPO

MAJOR = int(importlib.metadata.version("mcp").split(".")[0])
SERVER = REPO / "tests" / "support" / "mcp_server.py"
STDIO, HTTP = "stdio", "http"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(ledger: Path | None = None) -> dict[str, str]:
    """The test process's environment (so the server imports the same SDK), plus the ledger file."""
    env = dict(os.environ)
    if ledger is not None:
        env["MCP_TEST_LEDGER"] = str(ledger)
    return env


@contextlib.contextmanager
def http_server(ledger: Path | None = None, *, json_response: bool = False) -> Iterator[str]:
    """A Streamable HTTP server process; yields its MCP endpoint URL."""
    port = free_port()
    args = [sys.executable, str(SERVER), "http", str(port), *(["json"] if json_response else [])]
    proc = subprocess.Popen(args, env=server_env(ledger), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the MCP test server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def timeout(seconds: float | None) -> Any:
    """A read timeout as the installed SDK takes it."""
    if seconds is None:
        return None
    return dt.timedelta(seconds=seconds) if MAJOR == 1 else float(seconds)


@contextlib.asynccontextmanager
async def session(transport: str, *, url: str | None = None, ledger: Path | None = None,
                  read_timeout: float | None = None, initialize: bool = True) -> AsyncIterator[Any]:
    """An initialized ``ClientSession`` over stdio (a fresh server process) or Streamable HTTP (``url``)."""
    from mcp import ClientSession, StdioServerParameters

    if transport == STDIO:
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"], env=server_env(ledger))
        manager: Any = stdio_client(params)
    else:
        from mcp.client.streamable_http import streamable_http_client

        assert url is not None
        manager = streamable_http_client(url)
    async with manager as streams:
        async with ClientSession(streams[0], streams[1], read_timeout_seconds=timeout(read_timeout)) as s:
            if initialize:
                await s.initialize()
            yield s


def wire(result: Any) -> dict[str, Any]:
    """A result as the JSON object it is on the wire."""
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)  # type: ignore[no-any-return]


def wire_bytes(result: Any) -> bytes:
    return json.dumps(wire(result), sort_keys=True).encode()


def rpc_code(exc: BaseException) -> int | None:
    """The JSON-RPC code of an error the SDK raised, else None."""
    return getattr(getattr(exc, "error", None), "code", None)


def ledger_count(ledger: Path) -> int:
    return ledger.read_text(encoding="utf-8").count("\n") if ledger.exists() else 0
