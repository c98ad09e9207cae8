"""Plans: catalog names, TOML/JSON files, overrides and clear errors for bad plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentchaos_otel.plans.plan import NO_FAULTS, PlanError, load_plan_file, resolve_plan


def test_catalog_name_and_list_resolve() -> None:
    plan = resolve_plan("llm_error_single")
    assert plan.experiments[0].fault_names == ["llm_error_single"]
    combo = resolve_plan("llm_error_single,http_429")
    assert combo.experiments[0].fault_names == ["llm_error_single", "http_429"]
    assert resolve_plan(None) is NO_FAULTS and resolve_plan("none") is NO_FAULTS
    assert resolve_plan("bursty").tool_condition == "bursty"


def test_toml_plan_with_experiments_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    path.write_text("""
name = "degraded"
seed = 11
delay_scale = 0.5
[[experiment]]
name = "errors"
faults = ["llm_error_single", { fault = "http_429", probability = 0.5, count = 2 }]
[[experiment]]
name = "trunc"
faults = ["llm_truncate_persistent"]
strategy = "intermittent"
probability = 0.25
""")
    plan = load_plan_file(path)
    assert plan.name == "degraded" and plan.seed == 11 and plan.delay_scale == 0.5
    errors, trunc = plan.experiments
    rule = errors.rules[1]
    assert (rule.spec.name, rule.probability, rule.max_fires) == ("http_429", 0.5, 2)
    t = trunc.rules[0]
    assert (t.strategy, t.probability, t.max_fires) == ("intermittent", 0.25, None)
    assert resolve_plan(str(path)).experiments == plan.experiments


def test_json_plan_single_experiment(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"faults": ["tool_schema_burst"], "count": 1, "tool_condition": "independent"}))
    plan = load_plan_file(path)
    assert plan.experiments[0].rules[0].max_fires == 1 and plan.tool_condition == "independent"


@pytest.mark.parametrize(("text", "suffix", "message"), [
    ("faults = [", ".toml", "not valid TOML"),
    ('{"faults": ["llm_eror_single"]}', ".json", "llm_error_single"),
    ('{"faults": ["llm_error_single"], "probabilty": 1}', ".json", "unknown key"),
    ('{"faults": [{"fault": "llm_error_single", "probability": 2}]}', ".json", "within [0, 1]"),
    ('{"faults": ["llm_error_single"], "strategy": "sometimes"}', ".json", "unknown strategy"),
    ('{"name": "x"}', ".json", "needs 'faults'"),
    ('faults: [x]', ".yaml", "unknown plan format"),
    ('{"faults": "llm_error_single"}', ".json", "'faults' list"),
])
def test_bad_plans_give_one_clear_line(text: str, suffix: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_text(text)
    with pytest.raises(PlanError) as info:
        load_plan_file(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_missing_plan_file_and_unknown_name() -> None:
    with pytest.raises(PlanError, match="cannot read plan file"):
        load_plan_file("/nonexistent/plan.toml")
    with pytest.raises(PlanError, match="unknown fault"):
        resolve_plan("no_such_fault")
