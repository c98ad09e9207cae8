"""Build the framework matrix's virtualenv and run the matrix in it.

The frameworks do not go in the project's dev env, but they share one venv of their own: with
``constraints.txt`` (one resolution of the project beside the current release of every
framework) all five install together. ``ENVIRONMENTS`` says which frameworks go in which venv,
should a release ever force them apart (the frameworks in one venv must resolve there to the
versions each gets alone). Each venv lives under ``--root`` (default ``/tmp/agentchaos-fw``)
with the project installed editable beside its frameworks' requirements (``REQUIREMENTS``), then
runs ``pytest -m frameworks tests/frameworks`` with ``AGENTCHAOS_FRAMEWORK`` naming its
frameworks. Each step is timed.

    python tests/support/frameworks.py                    # every framework
    python tests/support/frameworks.py langgraph litellm  # some (the venvs that hold them)
    python tests/support/frameworks.py --reuse ...        # keep venvs that exist

Every install takes ``-c constraints.txt`` (the versions CI uses: the current release of each
framework, docs/install.md); ``AGENTCHAOS_CONSTRAINTS=<file>`` names another file, and an empty
value installs without constraints (pip picks the newest that resolve). Exit status: non-zero
when a build or a slice failed. Nothing here is imported by the tests.
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
# Which frameworks share a venv (see the module docstring and docs/frameworks.md).
ENVIRONMENTS: dict[str, tuple[str, ...]] = {
    "all": ("openai-agents", "pydantic-ai", "langgraph", "litellm", "google-adk"),
}
assert sorted(f for fs in ENVIRONMENTS.values() for f in fs) == sorted(REQUIREMENTS)


def requirements(env: str) -> list[str]:
    """Every requirement of the env's frameworks, each once, in order."""
    return list(dict.fromkeys(r for f in ENVIRONMENTS[env] for r in REQUIREMENTS[f]))


def _run(cmd: list[str], **kwargs: object) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kwargs).returncode  # type: ignore[call-overload]


def build(env: str, venv: Path, reuse: bool) -> tuple[int, float]:
    start = time.monotonic()
    if reuse and (venv / "bin" / "python").exists():
        return 0, 0.0
    rc = _run([sys.executable, "-m", "venv", "--clear", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    constraints = os.environ.get("AGENTCHAOS_CONSTRAINTS", str(ROOT / "constraints.txt"))
    extra = ["-c", constraints] if constraints else []
    rc = rc or _run([*pip, "--upgrade", "pip"])
    rc = rc or _run([*pip, *extra, "-e", str(ROOT), *requirements(env), *TEST_DEPS])
    return rc, time.monotonic() - start


def run_slice(frameworks: list[str], venv: Path) -> tuple[int, float]:
    start = time.monotonic()
    env = {**os.environ, "AGENTCHAOS_FRAMEWORK": ",".join(frameworks)}
    rc = _run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "frameworks",
               "tests/frameworks"], cwd=ROOT, env=env)
    return rc, time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("frameworks", nargs="*", help=f"some of: {', '.join(REQUIREMENTS)} (default: all)")
    parser.add_argument("--root", type=Path, default=Path("/tmp/agentchaos-fw"))
    parser.add_argument("--reuse", action="store_true", help="keep a venv that already exists")
    args = parser.parse_args(argv)
    args.root = args.root.resolve()  # the slices run with the repository as their working directory
    failed = 0
    rows = []
    unknown = [f for f in args.frameworks if f not in REQUIREMENTS]
    if unknown:
        parser.error(f"unknown framework {unknown[0]!r}; one of: {', '.join(REQUIREMENTS)}")
    chosen = args.frameworks or list(REQUIREMENTS)
    for env, members in ENVIRONMENTS.items():
        frameworks = [f for f in members if f in chosen]
        if not frameworks:
            continue
        rc, built = build(env, args.root / env, args.reuse)
        ran_rc, ran = run_slice(frameworks, args.root / env) if rc == 0 else (rc, 0.0)
        failed |= rc or ran_rc
        rows.append(f"{env} ({', '.join(frameworks)}): install {built:.0f} s (rc {rc}), run {ran:.0f} s (rc {ran_rc})")
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
