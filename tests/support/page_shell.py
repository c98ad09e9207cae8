"""One bash session per page, fed the page's commands one at a time, as a reader types them.

A page is read in one terminal: ``export X=Y`` holds for the commands after it, a command ended
by ``&`` runs in the background until a later ``kill %1`` / ``wait`` of the same page. So the
commands go to one non-interactive bash, each with its input from /dev/null (a command never
reads the ones after it), followed by a marker line carrying its exit status. The session is
the leader of its own process group; closing it ends whatever the page left running there.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Result:
    returncode: int | None  # None: it did not finish within its time
    output: str  # stdout and stderr as they came, background jobs' included


class PageShell:
    """A bash process in ``cwd`` with ``env``; ``run`` one command at a time, ``close`` at the end."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self._marker = f"__page_shell_{uuid.uuid4().hex}__"
        self._proc = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=cwd, env=env, text=True,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      start_new_session=True, bufsize=1)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        try:
            for line in self._proc.stdout:
                self._lines.put(line)
        except (ValueError, OSError):  # the pipe was closed under a process that outlived the group
            pass
        self._lines.put(None)

    def run(self, command: str, timeout: float) -> Result:
        """Run one command line; its output until its marker, and its exit status."""
        assert self._proc.stdin is not None
        self._proc.stdin.write(f"{{\n{command}\n}} </dev/null\nprintf '\\n{self._marker} %s\\n' \"$?\"\n")
        self._proc.stdin.flush()
        out: list[str] = []
        try:
            while True:
                line = self._lines.get(timeout=timeout)
                if line is None:
                    return Result(None, "".join(out) + "\n[the shell exited]")
                if line.startswith(self._marker):
                    text = "".join(out)
                    return Result(int(line.split()[1]), text[:-1] if text.endswith("\n") else text)
                out.append(line)
        except queue.Empty:
            return Result(None, "".join(out) + f"\n[still running after {timeout:g} s]")

    def close(self) -> None:
        """End the session and everything the page started in it."""
        try:
            os.killpg(self._proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self._proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        self._reader.join(timeout=15)  # the output's end, once every process of the group has let go of it
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def __enter__(self) -> PageShell:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
