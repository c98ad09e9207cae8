"""What a page's commands assume is in the directory they are typed in, and the shell they run in.

The pages are written for a reader in a checkout with the project installed: ``.venv`` holds it,
``docs/examples`` is there, ``agent.py`` / ``mcp_agent.py`` are the reader's own applications
(``tests/support/apps.py``), and the analysis commands run on the ``traces.duckdb`` that
``agentchaos demo`` leaves (a page that runs the demo itself makes its own). Nothing in the
repository is written: the checkout's files are reached through symbolic links, read-only uses.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from tests.support import REPO
from tests.support.apps import write_apps
from tests.support.doc_commands import Command, parts, program

VENV = Path(sys.executable).parent.parent
APP_TASKS = 2
_SCRUBBED = ("OTEL_", "AGENTCHAOS_", "OPENAI_", "ANTHROPIC_", "PHOENIX_")


def runs_demo(commands: list[Command]) -> bool:
    """Whether the page makes its own ``traces.duckdb`` with ``agentchaos demo``."""
    return any(program(p) == "agentchaos" and p.words[1:2] == ("demo",) and "--db" not in p.words
               for c in commands for p in parts(c.text))


def prepare(directory: Path, commands: list[Command], demo_store: Path) -> None:
    """Fill a fresh working directory with what the page's commands expect to find."""
    (directory / ".venv").symlink_to(VENV, target_is_directory=True)
    (directory / "docs").mkdir()
    (directory / "docs" / "examples").symlink_to(REPO / "docs" / "examples", target_is_directory=True)
    write_apps(directory, APP_TASKS)
    if not runs_demo(commands):
        shutil.copyfile(demo_store, directory / "traces.duckdb")


def environment(home: Path, model_url: str) -> dict[str, str]:
    """The reader's shell: the project's venv first on PATH, the checkout importable (``python -m
    benchmarks``), no OpenTelemetry or project setting of the machine running the tests, and the
    openai SDK's own variables pointing the reader's applications at the (simulated) model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED)
           and k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env.update(PATH=f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONPATH=str(REPO),
               HOME=os.environ.get("HOME", str(home)), OPENAI_BASE_URL=model_url,
               OPENAI_API_KEY="sk-docs-test", COLUMNS="120")
    return env
