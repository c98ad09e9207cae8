"""Build each framework's virtualenv and run its slice of the framework matrix.

The five frameworks cannot share one environment with each other and the project's dev env, so
each gets a venv of its own under ``--root`` (default ``/tmp/agentchaos-fw``) with the project
installed editable beside the framework's requirements (``REQUIREMENTS``), then runs
``pytest -m frameworks tests/frameworks`` with ``AGENTCHAOS_FRAMEWORK`` set. Each step is timed.

    python tests/support/frameworks.py                    # all five
    python tests/support/frameworks.py langgraph litellm  # some
    python tests/support/frameworks.py --reuse ...        # keep venvs that exist

Exit status: non-zero when a build or a slice failed. Nothing here is imported by the tests.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What each venv gets beside ``-e <project>``; versions as they resolved (see docs/frameworks.md).
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "openai-agents": ("openai-agents", "openinference-instrumentation-openai-agents"),
    "pydantic-ai": ("pydantic-ai-slim[openai]",),
    "langgraph": ("langgraph", "langchain-openai", "openinference-instrumentation-langchain"),
    "litellm": ("litellm",),
    "google-adk": ("google-adk", "litellm"),
}
TEST_DEPS = ("pytest", "pytest-asyncio")


def _run(cmd: list[str], **kwargs: object) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kwargs).returncode  # type: ignore[call-overload]


def build(framework: str, venv: Path, reuse: bool) -> tuple[int, float]:
    start = time.monotonic()
    if reuse and (venv / "bin" / "python").exists():
        return 0, 0.0
    rc = _run([sys.executable, "-m", "venv", "--clear", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    constraints = os.environ.get("AGENTCHAOS_CONSTRAINTS")
    extra = ["-c", constraints] if constraints else []
    rc = rc or _run([*pip, "--upgrade", "pip"])
    rc = rc or _run([*pip, *extra, "-e", str(ROOT), *REQUIREMENTS[framework], *TEST_DEPS])
    return rc, time.monotonic() - start


def run_slice(framework: str, venv: Path) -> tuple[int, float]:
    start = time.monotonic()
    env = {**os.environ, "AGENTCHAOS_FRAMEWORK": framework}
    rc = _run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "frameworks",
               "tests/frameworks"], cwd=ROOT, env=env)
    return rc, time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("frameworks", nargs="*", help=f"some of: {', '.join(REQUIREMENTS)} (default: all)")
    parser.add_argument("--root", type=Path, default=Path("/tmp/agentchaos-fw"))
    parser.add_argument("--reuse", action="store_true", help="keep a venv that already exists")
    args = parser.parse_args(argv)
    failed = 0
    rows = []
    unknown = [f for f in args.frameworks if f not in REQUIREMENTS]
    if unknown:
        parser.error(f"unknown framework {unknown[0]!r}; one of: {', '.join(REQUIREMENTS)}")
    for framework in args.frameworks or list(REQUIREMENTS):
        venv = args.root / framework
        rc, built = build(framework, venv, args.reuse)
        ran_rc, ran = run_slice(framework, venv) if rc == 0 else (rc, 0.0)
        failed |= rc or ran_rc
        rows.append(f"{framework}: install {built:.0f} s (rc {rc}), run {ran:.0f} s (rc {ran_rc})")
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
