"""Every command the README and the docs/ pages show runs as written.

Each page's ```bash / ```sh commands are typed, in page order, into one shell of their own, in a
fresh directory holding what the page assumes a reader has (``tests/support/doc_workdir.py``:
the project's venv as ``.venv``, ``docs/examples``, the reader's ``agent.py`` and
``mcp_agent.py``, and the ``traces.duckdb`` of a demo built once for the session unless the page
runs the demo itself). The reader's applications talk to the simulated model server through the
openai SDK's own variables. A command passes when it exits 0 without a traceback; the next
command then works on what it left. Set-up steps (the virtualenv, pip installs, the CI scripts)
and the benchmarks' measurement runs (minutes long, and writing the repository's recorded
figures) are checked for what they are instead of being run (``tests/support/doc_setup.py``).
A page whose commands are a whole study is marked ``slow`` (``SLOW`` says what it runs).
A page must stop whatever it started in the background.
"""

from __future__ import annotations

import contextlib
import fcntl
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentchaos_otel.sim.reference_agent import ReferencePolicy
from agentchaos_otel.sim.server import SimulatedModelServer
from tests.support import REPO
from tests.support.doc_commands import Command, commands, pages, parts, program, rebuild
from tests.support.doc_setup import check, kind
from tests.support.doc_workdir import VENV, environment, prepare
from tests.support.page_shell import PageShell

PAGES = [p for p in pages() if commands(p)]
# Pages whose commands are whole studies, as the page reports them (minutes on two cores).
SLOW = {
    "docs/campaigns.md": "the SIMULATED BFCL study: 200 tasks x 4 conditions, 800 graded episodes",
    "docs/guards.md": "50 BFCL tasks x 7 conditions with both guards, 350 graded episodes",
}
COMMAND_TIMEOUT_S = 300.0
# Pages whose receivers listen on the standard OTLP ports take turns across concurrent test runs.
PORT_LOCK = Path(tempfile.gettempdir()) / "agentchaos-otel-docs-ports.lock"


@pytest.fixture(scope="session")
def model() -> Iterator[SimulatedModelServer]:
    """The reader's LLM endpoint: the simulated model, answering as the reference agent expects."""
    with SimulatedModelServer(ReferencePolicy(), seed=2) as server:
        yield server


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory, model: SimulatedModelServer) -> Path:
    """The ``traces.duckdb`` a reader has after ``agentchaos demo`` (made once, copied per page)."""
    directory = tmp_path_factory.mktemp("demo")
    done = subprocess.run([str(VENV / "bin" / "agentchaos"), "demo"], cwd=directory, capture_output=True,
                          text=True, timeout=COMMAND_TIMEOUT_S, env=environment(directory, model.base_url))
    assert done.returncode == 0, done.stdout + done.stderr
    return directory / "traces.duckdb"


def _listens(cmds: list[Command]) -> bool:
    return any(program(p) == "agentchaos" and p.words[1:2] == ("traces",) and p.words[2:3] in (("receive",),
               ("receive-grpc",)) for c in cmds for p in parts(c.text))


@contextlib.contextmanager
def _turn(needed: bool) -> Iterator[None]:
    if not needed:
        yield
        return
    with PORT_LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.mark.parametrize("page", [
    pytest.param(p, id=str(p.relative_to(REPO)), marks=[pytest.mark.slow] if str(p.relative_to(REPO)) in SLOW else [])
    for p in PAGES])
def test_page_commands_run_as_written(page: Path, tmp_path: Path, demo_store: Path,
                                      model: SimulatedModelServer) -> None:
    cmds = commands(page)
    prepare(tmp_path, cmds, demo_store)
    with _turn(_listens(cmds)), PageShell(tmp_path, environment(tmp_path, model.base_url)) as shell:
        for cmd in cmds:
            split = parts(cmd.text)
            setup = [p for p in split if kind(p)]
            for step in setup:
                try:
                    check(step)
                except AssertionError as exc:
                    raise AssertionError(f"{cmd.where()}: {cmd.text}\n{exc}") from None
            rest = [p for p in split if not kind(p)]
            if not rest:
                continue
            result = shell.run(rebuild(rest) if setup else cmd.text, COMMAND_TIMEOUT_S)
            shown = f"{cmd.where()}: {cmd.text}\nexit status {result.returncode}\n{result.output[-6000:]}"
            assert result.returncode == 0, shown
            assert "Traceback (most recent call last)" not in result.output, shown
        left = shell.run("jobs -p", 30)
        assert left.output.strip() == "", f"{page.relative_to(REPO)} leaves background jobs running: {left.output}"
