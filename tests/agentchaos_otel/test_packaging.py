"""What the distribution declares: every import has a home, the core runs without the extras.

pyproject.toml's ``dependencies`` are what runs in or beside an agent's process; analysis, the
openai SDK, gRPC, Prometheus, Ray and MCP are extras (docs/install.md). Checked here: every
third-party module the product imports belongs to a declared requirement; each optional import
the core makes is mapped to the extra that brings it (``agentchaos_otel.extras``) and that extra
declares it; the core's entry points import and run with every optional package blocked; a command
that needs a missing extra says so in one line; the built wheel, installed on its own, holds the
core and both analysis packages and `diagnose` runs from it; and the resolution check's comparison
(``tests/support/resolution.py``) on canned pip reports.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from functools import cache
from pathlib import Path

import pytest

from agentchaos_otel import extras
from tests.support import REPO
from tests.support.resolution import canonical, compare, picked, requirement_name

PRODUCT = ("agentchaos_otel", "diagnosers", "predictors")
# Imported by the product but installed another way, on purpose (see where each is imported).
NOT_REQUIREMENTS = {
    "bfcl-eval": "agents/bfcl: installed with --no-deps from requirements-bfcl.txt",
    "httpx2": "a client library we hook when the agent has it, never need",
    "anthropic": "guards/errors: Anthropic's error types when that SDK is installed",
}


@cache
def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _names(requirements: list[str]) -> set[str]:
    return {requirement_name(r) for r in requirements}


def _declared() -> dict[str, set[str]]:
    project = _pyproject()["project"]
    out = {"": _names(project["dependencies"])}
    for extra, reqs in project["optional-dependencies"].items():
        out[extra] = _names(reqs)
    return out


@cache
def _file_owner() -> dict[str, str]:
    """Installed file (relative path) -> the distribution that installed it."""
    owner = {}
    for dist in metadata.distributions():
        for f in dist.files or ():
            owner.setdefault(str(f), canonical(dist.metadata["Name"]))
    return owner


def _distribution(module: str) -> str | None:
    """The distribution that installed ``module`` (the deepest package file found), None for the stdlib."""
    parts = module.split(".")
    if parts[0] in sys.stdlib_module_names or parts[0] in PRODUCT or parts[0] == "__future__":
        return None
    owner = _file_owner()
    for n in range(len(parts), 0, -1):
        base = "/".join(parts[:n])
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if candidate in owner:
                return owner[candidate]
    found = metadata.packages_distributions().get(parts[0])
    return canonical(found[0]) if found else f"?{module}"


def _imports() -> dict[str, set[str]]:
    """Every absolute import of the product -> the files that make it."""
    found: dict[str, set[str]] = {}
    for pkg in PRODUCT:
        for path in sorted((REPO / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
                for name in names:
                    found.setdefault(name, set()).add(str(path.relative_to(REPO)))
    return found


def test_every_third_party_import_belongs_to_a_declared_requirement() -> None:
    declared = set().union(*_declared().values())
    undeclared = {}
    for module, where in _imports().items():
        dist = _distribution(module)
        if dist is not None and dist not in declared and dist not in NOT_REQUIREMENTS:
            undeclared[module] = (dist, sorted(where)[:3])
    assert not undeclared, f"imports no requirement or extra declares: {undeclared}"


def test_each_optional_import_maps_to_an_extra_that_declares_it() -> None:
    declared = _declared()
    for module, (dist, extra) in extras.OPTIONAL.items():
        assert extra in declared, f"{module}: extra {extra!r} is not in pyproject.toml"
        assert canonical(dist) in declared[extra], f"{module}: the {extra!r} extra does not declare {dist}"
        assert canonical(dist) not in declared[""], f"{dist} is a core dependency, not an extra's"


def test_core_dependencies_are_ranges_not_pins() -> None:
    for req in _pyproject()["project"]["dependencies"]:
        assert "==" not in req, f"{req}: the core takes a compatible range (exact versions: constraints.txt)"
        assert ">=" in req, f"{req}: a lower bound the code needs"


def test_the_constraints_file_pins_what_ci_installs() -> None:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact version"
            pins[canonical(name)] = version
    for name in _declared()[""] | _declared()["dev"]:
        if name != "agentchaos-otel":
            assert name in pins, f"constraints.txt has no version of {name}"


_BLOCKED = sorted(set(extras.OPTIONAL) | {"anthropic"})
_CORE_RUN = textwrap.dedent("""
    import sys
    for name in {blocked!r}:
        sys.modules[name] = None  # as if not installed: importing it raises ModuleNotFoundError
    import agentchaos_otel
    from agentchaos_otel import zero_code, traces_export, instrumentor, episode_scope
    from agentchaos_otel.store.receivers import otlp_http
    from opentelemetry.sdk.trace import TracerProvider
    import httpx
    from agentchaos_otel.sim.reference_policy import ReferencePolicy
    from agentchaos_otel.sim.server import SimulatedModelServer
    handle = agentchaos_otel.configure(db=sys.argv[1], plan="llm_error_single", tracer_provider=TracerProvider())
    with SimulatedModelServer(ReferencePolicy(), seed=0) as server, agentchaos_otel.episode("t1"):
        body = {{"model": ReferencePolicy().name, "messages": [{{"role": "user", "content": "hi"}}]}}
        httpx.post(server.base_url + "/chat/completions", json=body)
    handle.shutdown()
    from agentchaos_otel.cli.errors import run_app
    from agentchaos_otel.cli.main import app
    sys.exit(run_app(app, "agentchaos", sys.argv[2:]))
""")


def _core(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = _CORE_RUN.format(blocked=_BLOCKED)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code, str(tmp_path / "t.duckdb"), *args], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=120)


def test_the_core_runs_with_every_extra_missing(tmp_path: Path) -> None:
    done = _core(tmp_path, "traces", "summary", str(tmp_path / "t.duckdb"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "t.duckdb").exists()
    done = _core(tmp_path, "--help")
    assert done.returncode == 0 and "traces" in done.stdout, done.stderr


def test_a_command_that_needs_an_extra_says_which_in_one_line(tmp_path: Path) -> None:
    done = _core(tmp_path, "report", str(tmp_path / "t.duckdb"))
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 1
    assert len(lines) == 1, done.stderr
    assert re.fullmatch(r"agentchaos: error: this command needs \S+, which is not installed: "
                        r"pip install 'agentchaos-otel\[analysis\]'", lines[0]), lines[0]


def test_a_library_call_that_needs_an_extra_raises_the_same_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc.trace_exporter", None)
    from agentchaos_otel.otlp_exporters import span_exporter_from_env

    with pytest.raises(extras.ExtraMissing) as info:
        span_exporter_from_env(protocol="grpc")
    assert str(info.value) == ("OTLP over gRPC needs opentelemetry-exporter-otlp-proto-grpc, which is not installed: "
                               "pip install 'agentchaos-otel[grpc]'")


def test_errors_that_are_not_a_missing_extra_keep_their_own_line() -> None:
    assert extras.missing_line(ModuleNotFoundError("x", name="no_such_module_here")) is None
    assert extras.missing_line(ValueError("sklearn")) is None
    assert extras.extra_for("opentelemetry.exporter.otlp.proto.grpc.metric_exporter") == \
        ("opentelemetry-exporter-otlp-proto-grpc", "grpc")
    assert extras.extra_for("grpcio_tools") is None


def _report(**versions: str) -> dict:
    return {"install": [{"metadata": {"name": n, "version": v}} for n, v in versions.items()]}


def test_resolution_check_flags_an_older_framework_release_beside_the_project() -> None:
    alone = picked(_report(**{"google_adk": "2.13.0", "opentelemetry-api": "1.44.0"}))
    beside = picked(_report(**{"google-adk": "1.14.1", "opentelemetry-api": "1.45.2", "agentchaos-otel": "0.1.0"}))
    out = compare("google-adk", ("google-adk",), alone, beside)
    assert not out.ok and "google-adk 1.14.1 beside the project, 2.13.0 alone" in out.problem
    assert out.shared == {"opentelemetry-api": "1.45.2", "agentchaos-otel": "0.1.0"}
    same = compare("google-adk", ("google-adk",), alone, picked(_report(**{"google-adk": "2.13.0"})))
    assert same.ok and same.beside == {"google-adk": "2.13.0"}


def test_resolution_check_reads_every_package_a_framework_names() -> None:
    alone = picked(_report(langgraph="1.2.24", **{"langchain-openai": "1.8.1"}))
    beside = picked(_report(langgraph="1.2.24", **{"langchain_openai": "1.7.0"}))
    out = compare("langgraph", ("langgraph", "langchain-openai"), alone, beside)
    assert not out.ok and "langchain-openai 1.7.0 beside the project, 1.8.1 alone" in out.problem
    assert requirement_name("pydantic-ai-slim[openai]>=2") == "pydantic-ai-slim"


_FROM_WHEEL = """
import sys
from pathlib import Path

import agentchaos_otel, diagnosers, predictors
from agentchaos_otel.vocabulary import read  # the error vocabulary is package data
from diagnosers.cli import main

target = Path(sys.argv[1])
for module in (agentchaos_otel, diagnosers, predictors, read):
    assert Path(module.__file__).is_relative_to(target), module.__file__
sys.argv = ["diagnose", *sys.argv[2:]]
main()
"""


def test_the_built_wheel_holds_the_three_packages_and_diagnose_runs_from_it(tmp_path: Path) -> None:
    """What ``pip install agentchaos-otel`` gives (not the editable checkout): the wheel built from
    the repository, installed on its own, imports the core and both analysis packages from where it
    was installed and diagnoses a store made by its own ``traces import``."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(REPO),
                    "-w", str(tmp_path / "w")], check=True, capture_output=True, timeout=300)
    (wheel,) = (tmp_path / "w").glob("agentchaos_otel-*.whl")
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))},
           "PYTHONPATH": str(target)}
    db = tmp_path / "t.duckdb"
    imported = subprocess.run([sys.executable, "-c", "from agentchaos_otel.cli.main import main; main()", "traces",
                               "import", str(REPO / "docs/examples/import"), "--db", str(db)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr
    done = subprocess.run([sys.executable, "-c", _FROM_WHEEL, str(target), str(db), "--all", "--json", "--no-write"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {d["trace_id"] for d in json.loads(done.stdout)}, done.stdout
