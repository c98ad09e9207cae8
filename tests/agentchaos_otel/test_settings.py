"""One home for the ``AGENTCHAOS_*`` variables: the module, the docs table and every reader agree.

``agentchaos_otel/settings.py`` holds each variable's name, default, parse rule and doc line; the
reference table in docs/configuration.md is rendered from it here and must match; no other module
of the product reads a variable of its own; ``configure()`` takes its defaults from the
environment; the zero-code launcher reacts only to variables that ask for injection or the store.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider

import agentchaos_otel
from agentchaos_otel import settings
from agentchaos_otel.plans import binding
from agentchaos_otel.zero_code_launcher import asked_for_us, select
from tests.support import REPO

DOC = REPO / "docs" / "configuration.md"
BEGIN = "<!-- settings table: rendered from agentchaos_otel/settings.py (tests/agentchaos_otel/test_settings.py) -->"
END = "<!-- end of settings table -->"
PRODUCT = ("agentchaos_otel", "diagnosers", "predictors")
# Python names that start like a variable but are constants of the product (published figures,
# fault families), not environment variables.
NOT_VARIABLES = {"AGENTCHAOS_SOURCE", "AGENTCHAOS_FIGURES", "AGENTCHAOS_TYPES", "AGENTCHAOS_NAMES"}


def _default(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"`{value}`"


def render_table() -> str:
    rows = ["| Variable | Default | Read as | What it does | Selects our distro under zero-code |",
            "|---|---|---|---|---|"]
    for s in settings.SETTINGS:
        rows.append(f"| `{s.name}` | {_default(s.default)} | {s.rule} | {s.doc} | {'yes' if s.asks_for_us else 'no'} |")
    return "\n".join(rows)


def test_the_docs_table_is_the_module() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"{DOC} lost its table markers"
    table = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert table == render_table(), "docs/configuration.md's table differs from settings.py; it should read:\n" \
        + render_table()
    named = set(re.findall(r"AGENTCHAOS_[A-Z_]+", table))
    assert named == set(settings.BY_NAME), "every variable in the table is in the module and vice versa"


def _product_sources() -> list[Path]:
    return [p for pkg in PRODUCT for p in sorted((REPO / pkg).rglob("*.py"))]


def test_every_variable_the_product_names_is_a_setting_and_only_settings_reads_one() -> None:
    named: dict[str, list[str]] = {}
    readers = []
    for path in _product_sources():
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(REPO))
        for name in set(re.findall(r"\bAGENTCHAOS_[A-Z_]*[A-Z]", text)) - NOT_VARIABLES:
            named.setdefault(name, []).append(rel)
        if rel != "agentchaos_otel/settings.py" and re.search(
                r"""(environ(\.get)?|getenv)\s*[\[(]\s*f?["']AGENTCHAOS_|envvar\s*=\s*["']AGENTCHAOS_""", text):
            readers.append(rel)
    unknown = {name: where for name, where in named.items() if name not in settings.BY_NAME}
    assert not unknown, f"variables named outside settings.py: {unknown}"
    assert not readers, f"modules reading an AGENTCHAOS_* variable themselves: {readers}"


def test_parse_rules_say_what_is_wrong_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    env = {"AGENTCHAOS_SEED": " 12 ", "AGENTCHAOS_MCP": "Off", "AGENTCHAOS_PROMETHEUS_PORT": "   "}
    assert settings.SEED.value(env) == 12
    assert settings.MCP.value(env) is False and settings.MCP.value({}) is True
    assert settings.PROMETHEUS_PORT.value(env) is None, "blank is unset"
    with pytest.raises(settings.SettingError) as info:
        settings.SEED.value({"AGENTCHAOS_SEED": "seven"})
    assert str(info.value) == "AGENTCHAOS_SEED='seven' must be an integer"
    with pytest.raises(settings.SettingError, match="not a port number"):
        settings.PROMETHEUS_PORT.value({"AGENTCHAOS_PROMETHEUS_PORT": "70000"})
    with pytest.raises(settings.SettingError, match="must not be negative"):
        settings.PROMETHEUS_WAIT.value({"AGENTCHAOS_PROMETHEUS_WAIT": "-1"})
    with caplog.at_level(logging.WARNING, logger="agentchaos_otel.settings"):
        assert settings.RECEIVER_QUEUE.value({"AGENTCHAOS_RECEIVER_QUEUE": "many"}) == 64
        assert settings.MEMORY_SPOOL_MB.value({"AGENTCHAOS_MEMORY_SPOOL_MB": "0.5"}) == 0.5
    (record,) = caplog.records
    assert record.getMessage() == "AGENTCHAOS_RECEIVER_QUEUE='many' must be an integer; using 64"


@pytest.fixture
def provider() -> Any:
    tp = TracerProvider()
    yield tp
    tp.shutdown()


def test_configure_takes_db_plan_and_seed_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               provider: TracerProvider) -> None:
    monkeypatch.setenv("AGENTCHAOS_DB", str(tmp_path / "from-env.duckdb"))
    monkeypatch.setenv("AGENTCHAOS_PLAN", "llm_error_single")
    monkeypatch.setenv("AGENTCHAOS_SEED", "7")
    with agentchaos_otel.configure(tracer_provider=provider, metrics=False) as handle:
        state = binding.process_default()
        assert handle.db == tmp_path / "from-env.duckdb"
        assert state is not None and state.plan.name == "llm_error_single" and state.seed == 7
    with agentchaos_otel.configure(db=None, plan="none", seed=3, tracer_provider=provider, metrics=False) as handle:
        state = binding.process_default()
        assert handle.db is None and not handle.processors, "db=None is no store"
        assert state is not None and not state.has_faults and state.seed == 3, "arguments given in code win"


def test_configure_without_variables_keeps_the_built_in_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 provider: TracerProvider) -> None:
    for s in settings.SETTINGS:
        monkeypatch.delenv(s.name, raising=False)
    monkeypatch.chdir(tmp_path)
    with agentchaos_otel.configure(tracer_provider=provider, metrics=False) as handle:
        state = binding.process_default()
        assert handle.db == Path("traces.duckdb")
        assert state is not None and not state.has_faults and state.seed == 0


def test_configure_refuses_a_bad_variable_without_raising(monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture,
                                                          provider: TracerProvider) -> None:
    monkeypatch.setenv("AGENTCHAOS_PLAN", "no_such_fault")
    with caplog.at_level(logging.ERROR), \
            agentchaos_otel.configure(db=None, tracer_provider=provider, metrics=False):
        state = binding.process_default()
        assert state is not None and not state.has_faults
    (record,) = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert "AGENTCHAOS_PLAN" in record.getMessage() and "\n" not in record.getMessage()


@pytest.mark.parametrize("name", [s.name for s in settings.SETTINGS])
def test_the_launcher_reacts_only_to_variables_that_ask_for_injection_or_the_store(name: str) -> None:
    env = {"PATH": "/bin", name: "1"}
    select(env)
    assert ("OTEL_PYTHON_DISTRO" in env) is settings.BY_NAME[name].asks_for_us, name


def test_only_injection_and_store_variables_ask_for_us() -> None:
    asking = {s.name for s in settings.SETTINGS if s.asks_for_us}
    assert asking == {"AGENTCHAOS_PLAN", "AGENTCHAOS_SEED", "AGENTCHAOS_DB", "AGENTCHAOS_TASK_ID"}


def test_the_launcher_reads_our_exporter_in_a_list_and_ignores_blank_variables() -> None:
    assert asked_for_us({"OTEL_TRACES_EXPORTER": "otlp, agentchaos_duckdb"})
    assert not asked_for_us({"OTEL_TRACES_EXPORTER": "otlp", "AGENTCHAOS_PLAN": " "})
    assert not asked_for_us({"AGENTCHAOS_DEBUG": "1", "AGENTCHAOS_CACHE_DIR": "/tmp/x"})
