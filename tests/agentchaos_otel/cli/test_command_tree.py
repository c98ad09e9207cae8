"""The shape of the command line: real sub-apps, help and completion at every level, clean help texts.

Every command of ``agentchaos`` (and the standalone ``diagnose``) is walked through the click tree
typer builds: each is mounted once, has help for every option, and its ``--help`` shows neither
``<bool>`` types for flags, ``{arg}`` metavars, ``<list[str]>`` annotations nor reStructuredText
backticks. Shell completion is asked for in a real process at nested levels. Start-up stays
light: building the tree imports none of DuckDB, numpy, scikit-learn, the OTel SDK or the
diagnosers' rules (checked by module name, not by the clock).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import typer

from agentchaos_otel.cli.errors import run_app
from agentchaos_otel.cli.main import app as agentchaos_app
from diagnosers.cli import app as diagnose_app


def _walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _walk(sub, (*path, name))


TREE = list(_walk(typer.main.get_command(agentchaos_app), ("agentchaos",)))
PATHS = [p for p, _ in TREE]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_", "_"))}


def test_every_area_is_a_mounted_sub_app() -> None:
    areas = {p[1] for p in PATHS if len(p) > 1}
    assert areas == {"faults", "traces", "campaign", "report", "demo", "sim", "bfcl", "diagnose", "predict"}
    leaves = {" ".join(p[1:]) for p, c in TREE if not getattr(c, "commands", None)}
    assert {"traces summary", "traces sql", "traces import", "traces export", "traces receive",
            "traces receive-grpc", "campaign run", "campaign sanity", "campaign runs", "report", "demo",
            "diagnose run", "diagnose evaluate", "diagnose train", "predict train", "predict evaluate",
            "predict features", "predict score", "faults list", "faults show", "sim serve", "sim policies",
            "bfcl tasks"} <= leaves


def test_each_command_is_mounted_once() -> None:
    callbacks = [c.callback for _, c in TREE if c.callback is not None and not getattr(c, "commands", None)]
    assert len(callbacks) == len(set(callbacks))


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) for p in PATHS])
def test_help_at_every_level_is_clean(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    assert run_app(agentchaos_app, "agentchaos", [*path[1:], "--help"]) == 0
    out = capsys.readouterr().out
    usage = out.strip().splitlines()[0]
    assert usage.startswith(f"Usage: {' '.join(path)}"), usage
    assert "{" not in usage and "<bool>" not in out and "`" not in out, out
    assert "list[" not in out, out  # a type per value (``<path>``), not a Python annotation
    assert "Show this message and exit." in out


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) for p in PATHS])
def test_every_option_and_argument_has_help(path: tuple[str, ...]) -> None:
    command = dict(TREE)[path]
    for param in command.params:
        assert (param.help or "").strip(), f"{' '.join(path)} {param.name} has no help"
        assert "`" not in param.help, f"{' '.join(path)} {param.name}: {param.help}"
    assert "`" not in (command.help or ""), command.help


def test_the_standalone_diagnose_is_the_same_app(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_app(diagnose_app, "diagnose", ["--help"]) == 0
    out = capsys.readouterr().out
    assert {"run", "evaluate", "train"} <= set(out.split())
    assert dict(TREE)[("agentchaos", "diagnose")].commands.keys() == typer.main.get_command(
        diagnose_app).commands.keys()


@pytest.mark.parametrize("script,words,expected", [
    ("agentchaos", "agentchaos traces su", {"summary"}),
    ("agentchaos", "agentchaos diagnose run x.duckdb --method ", {"rule", "llm", "learned", "text"}),
    ("agentchaos", "agentchaos predict train x.duckdb --features ", {"external", "entropy", "both"}),
    ("agentchaos", "agentchaos faults list --family ", {"agentchaos", "http", "stream", "variant"}),
    ("diagnose", "diagnose ev", {"evaluate"}),
])
def test_shell_completion_reaches_nested_commands_and_choices(script: str, words: str, expected: set[str]) -> None:
    code = (f"import sys; from importlib.metadata import entry_points; "
            f"(ep,) = entry_points(group='console_scripts', name={script!r}); sys.argv[0] = {script!r}; ep.load()()")
    env = {**_env(), f"_{script.upper()}_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split(" ")) - 1)}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert expected <= set(result.stdout.split()), result.stdout


def test_building_the_command_tree_loads_no_heavy_module() -> None:
    heavy = ["duckdb", "numpy", "sklearn", "scipy", "polars", "pyarrow", "matplotlib", "openai", "httpx",
             "opentelemetry.sdk", "diagnosers.rules", "predictors.model", "agentchaos_otel.store",
             "agentchaos_otel.campaign.runner", "agentchaos_otel.sim.server"]
    code = ("import sys, typer; import agentchaos_otel.cli.main as m; typer.main.get_command(m.app); "
            f"print(' '.join(n for n in {heavy!r} if n in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [], result.stdout


def test_choices_match_the_sets_their_modules_own() -> None:
    from agentchaos_otel.cli import choices, sim
    from agentchaos_otel.faults.spec import FAMILIES
    from agentchaos_otel.otlp_exporters import PROTOCOLS
    from agentchaos_otel.store.importers.trace_files import FORMATS
    from agentchaos_otel.traces_export import DIAGNOSE_MODES
    from diagnosers.driver import EXECUTORS
    from predictors import cli as predict_cli
    from predictors.features import FEATURE_SETS
    from predictors.model import DEFAULT_FALSE_ALARM

    assert {str(v) for v in choices.Family} == set(FAMILIES)
    assert {str(v) for v in choices.Format} == set(FORMATS)
    assert {str(v) for v in choices.Protocol} == set(PROTOCOLS)
    assert {str(v) for v in choices.DiagnoseMode} == set(DIAGNOSE_MODES)
    assert {str(v) for v in choices.Executor} == set(EXECUTORS)
    assert {str(v) for v in predict_cli.FeatureSet} == set(FEATURE_SETS)
    assert predict_cli.DEFAULT_FALSE_ALARM == DEFAULT_FALSE_ALARM
    assert {str(v) for v in sim.PolicyName} == set(sim.POLICIES)


def test_a_value_outside_a_choice_is_refused_in_the_project_wording(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_app(agentchaos_app, "agentchaos", ["faults", "list", "--family", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown family 'nope'; choose one of agentchaos, compound" in err and err.count("\n") == 1
