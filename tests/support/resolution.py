"""Resolution check: this project installs beside the current release of each agent framework.

For each framework, pip resolves it twice without installing anything (``pip install --dry-run
--ignore-installed --report``): alone, which gives the newest release this Python can install,
and beside this project. The check fails when beside the project pip would not resolve, or
would pick another release of the framework's own packages than alone (the way a pin of ours
silently buys an old framework). Resolutions run in parallel; each one is timed.

    python tests/support/resolution.py                       # every framework
    python tests/support/resolution.py google-adk litellm    # some
    python tests/support/resolution.py --json out.json       # the versions picked, for the record
    python tests/support/resolution.py --write-constraints constraints.txt

``--write-constraints`` then resolves ``.[dev]`` beside every framework at the release it got alone
(and the instrumentations the framework matrix adds, ``ALSO``) and writes every package of that one
resolution, exactly pinned: the file CI, the benchmarks and the framework matrix install with ``-c``.

It needs the package index (nothing is installed). Nothing here is imported by the tests except
the comparison (``compare``), which ``tests/agentchaos_otel/test_packaging.py`` checks on canned reports.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# Each framework's requirements as a user installs them; the first names are the framework's own
# packages, whose versions must not change beside this project.
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "google-adk": ("google-adk",),
    "openai-agents": ("openai-agents",),
    "pydantic-ai": ("pydantic-ai-slim[openai]",),
    "langgraph": ("langgraph", "langchain-openai"),
    "litellm": ("litellm",),
    "openinference-instrumentation-openai": ("openinference-instrumentation-openai",),
}
# Installed beside the frameworks in the framework matrix (tests/support/frameworks.py), pinned too.
ALSO = ("openinference-instrumentation-openai-agents", "openinference-instrumentation-langchain")
CONSTRAINTS_HEADER = """\
# Exact versions for CI, the benchmarks and the framework matrix: one working resolution of
# agentchaos-otel[dev] beside the current release of each framework tests/support/resolution.py checks
# ({frameworks}) and {also} (Python {python}).
# Written by: python tests/support/resolution.py --write-constraints constraints.txt
# Use: pip install -c constraints.txt -e ".[dev]"
"""
# Versions reported beside the framework's own (what the project shares with it).
SHARED = ("opentelemetry-api", "opentelemetry-sdk", "httpx", "openai", "agentchaos-otel")


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return canonical(re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0])


def picked(report: dict[str, Any]) -> dict[str, str]:
    """Distribution -> version pip would install, from a ``--report`` document."""
    return {canonical(item["metadata"]["name"]): item["metadata"]["version"] for item in report.get("install", [])}


@dataclass
class Outcome:
    framework: str
    alone: dict[str, str] = field(default_factory=dict)  # the framework's packages, resolved alone
    beside: dict[str, str] = field(default_factory=dict)  # the same, beside this project
    shared: dict[str, str] = field(default_factory=dict)  # SHARED versions beside this project
    seconds: float = 0.0
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def compare(framework: str, requirements: tuple[str, ...], alone: dict[str, str],
            beside: dict[str, str]) -> Outcome:
    """The outcome of one framework from the two resolutions (versions by canonical name)."""
    own = [requirement_name(r) for r in requirements]
    out = Outcome(framework, alone={n: alone.get(n, "?") for n in own}, beside={n: beside.get(n, "?") for n in own},
                  shared={n: beside[n] for n in SHARED if n in beside})
    changed = [f"{n} {beside.get(n, 'nothing')} beside the project, {alone.get(n, 'nothing')} alone"
               for n in own if beside.get(n) != alone.get(n)]
    if changed:
        out.problem = "pip would pick another release: " + "; ".join(changed)
    return out


def resolve(requirements: list[str], python: str = sys.executable) -> tuple[dict[str, str] | None, str]:
    """Versions pip would install for ``requirements`` in an empty environment, or None and why not."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        done = subprocess.run([python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                               "--disable-pip-version-check", "--report", str(report), *requirements],
                              capture_output=True, text=True)
        if done.returncode != 0 or not report.exists():
            lines = [ln for ln in (done.stderr or done.stdout).splitlines() if ln.startswith("ERROR")]
            return None, (lines[-1] if lines else f"pip exited with {done.returncode}")
        return picked(json.loads(report.read_text())), ""


def check(framework: str, project: str, python: str = sys.executable) -> Outcome:
    requirements = FRAMEWORKS[framework]
    start = time.monotonic()
    alone, why = resolve(list(requirements), python)
    if alone is None:
        return Outcome(framework, seconds=time.monotonic() - start, problem=f"does not resolve alone: {why}")
    beside, why = resolve([project, *requirements], python)
    if beside is None:
        return Outcome(framework, seconds=time.monotonic() - start,
                       problem=f"does not resolve beside the project: {why}")
    out = compare(framework, requirements, alone, beside)
    out.seconds = time.monotonic() - start
    return out


def write_constraints(path: Path, outcomes: list[Outcome], project: str, python: str = sys.executable) -> str:
    """Resolve ``project[dev]`` beside every framework at its release alone; write the pins. '' or why not."""
    current = [f"{name}=={version}" for o in outcomes for name, version in o.alone.items()]
    extras = {requirement_name(r): r[len(requirement_name(r)):] for reqs in FRAMEWORKS.values() for r in reqs}
    current = [f"{n}{extras.get(n.split('==')[0], '')}=={v}" for n, v in (c.split("==") for c in current)]
    versions, why = resolve([f"{project}[dev]", *current, *ALSO], python)
    if versions is None:
        return why
    pins = sorted((n, v) for n, v in versions.items() if n != "agentchaos-otel")
    header = CONSTRAINTS_HEADER.format(frameworks=", ".join(current), also=" and ".join(ALSO),
                                       python=".".join(map(str, sys.version_info[:2])))
    path.write_text(header + "".join(f"{n}=={v}\n" for n, v in pins))
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("frameworks", nargs="*", help=f"some of: {', '.join(FRAMEWORKS)} (default: all)")
    parser.add_argument("--project", default=str(ROOT), help="what to install beside them (default: this checkout)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose pip resolves")
    parser.add_argument("--jobs", type=int, default=3, help="resolutions at a time")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    parser.add_argument("--write-constraints", type=Path, help="then write the constraints file here")
    args = parser.parse_args(argv)
    unknown = [f for f in args.frameworks if f not in FRAMEWORKS]
    if unknown:
        parser.error(f"unknown framework {unknown[0]!r}; one of: {', '.join(FRAMEWORKS)}")
    chosen = args.frameworks or list(FRAMEWORKS)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda f: check(f, args.project, args.python), chosen))
    for o in outcomes:
        versions = ", ".join(f"{n} {v}" for n, v in o.beside.items()) or "-"
        shared = ", ".join(f"{n} {v}" for n, v in o.shared.items())
        status = "ok" if o.ok else f"FAILED: {o.problem}"
        print(f"{o.framework:38} {versions:45} [{shared}] {o.seconds:5.0f} s  {status}")
    print(f"{sum(o.ok for o in outcomes)} of {len(outcomes)} resolve to their current release beside the project "
          f"({time.monotonic() - start:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=2) + "\n")
    if not all(o.ok for o in outcomes):
        return 1
    if args.write_constraints:
        why = write_constraints(args.write_constraints, outcomes, args.project, args.python)
        print(f"constraints: {why}" if why else f"wrote {args.write_constraints}")
        return 1 if why else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
