"""A real Phoenix on loopback, started from the ``arize-phoenix`` package in its own environment.

Phoenix cannot share the project's environment (its dependencies pin versions the dev extra
does not allow), so it runs as a subprocess of another Python: ``AGENTCHAOS_PHOENIX_PYTHON``,
else ``.phoenix-venv/bin/python`` at the repository's top (what ``.ci/run`` installs:
``python3 -m venv .phoenix-venv && .phoenix-venv/bin/pip install arize-phoenix==20.26.1``).

Each server gets a fresh working directory (its SQLite database): Phoenix keeps a trace in the
project it first reached, so reusing one would make a second export silently land nowhere new.
Both ports are free ones picked here (Phoenix binds its gRPC port on every interface whatever
``PHOENIX_HOST`` says, so a fixed one could collide). The process runs in its own session and
is stopped with SIGTERM to that group.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import httpx

REPO = Path(__file__).resolve().parents[2]
PYTHON_ENV = "AGENTCHAOS_PHOENIX_PYTHON"
VENV_PYTHON = REPO / ".phoenix-venv" / "bin" / "python"
PHOENIX_VERSION = "20.26.1"
# Variables of the caller that would send Phoenix elsewhere (its database, its own tracing).
_DROPPED = ("OTEL_", "PHOENIX_", "PYTHONPATH")


def phoenix_python() -> str | None:
    """The Python with arize-phoenix installed, or None."""
    given = os.environ.get(PYTHON_ENV, "").strip()
    if given:
        return given
    return str(VENV_PYTHON) if VENV_PYTHON.exists() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PhoenixServer:
    """``with PhoenixServer(python, workdir) as px: px.url ...``; startup is bounded by ``ready_s``."""

    def __init__(self, python: str, workdir: Path, *, ready_s: float = 180.0) -> None:
        self.python, self.workdir, self.ready_s = python, Path(workdir), ready_s
        self.port, self.grpc_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_s: float | None = None

    @property
    def log(self) -> Path:
        return self.workdir / "phoenix.log"

    def start(self) -> PhoenixServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED)}
        env.update({"PHOENIX_WORKING_DIR": str(self.workdir), "PHOENIX_HOST": "127.0.0.1",
                    "PHOENIX_PORT": str(self.port), "PHOENIX_GRPC_PORT": str(self.grpc_port),
                    "PHOENIX_TELEMETRY_ENABLED": "false", "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
                    "PHOENIX_LOG_MIGRATIONS": "false"})
        t0 = time.monotonic()
        with open(self.log, "wb") as log:  # the child keeps its own copy of the descriptor
            # cwd is the working directory: started inside site-packages/phoenix, its `logging`
            # package would shadow the standard library's.
            self.proc = subprocess.Popen([self.python, "-m", "phoenix.server.main", "serve"], env=env,
                                         cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        while time.monotonic() - t0 < self.ready_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Phoenix exited with {self.proc.returncode}: {self._tail()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    self.started_s = time.monotonic() - t0
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"Phoenix was not ready within {self.ready_s:.0f} s: {self._tail()}")

    def _tail(self) -> str:
        try:
            lines = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(lines[-3:])[-400:] or "(empty log)"

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def __enter__(self) -> PhoenixServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
