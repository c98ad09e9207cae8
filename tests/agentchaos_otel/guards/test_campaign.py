"""Guarded campaign conditions and the report's guard section, on hand-built traces and on a small
simulated BFCL campaign (SIMULATED: evidence about the harness, never about a real model)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentchaos_otel import attributes as A
from agentchaos_otel import stats
from agentchaos_otel.agents.bfcl import bfcl_available
from agentchaos_otel.campaign import measures as M
from agentchaos_otel.campaign.guard_report import guard_measures
from agentchaos_otel.campaign.guarded import expand_conditions, parse_guards, split_label
from agentchaos_otel.campaign.report import rate
from agentchaos_otel.campaign.runner import EpisodeSpec, campaign_runs
from tests.agentchaos_otel.campaign.test_cli import mounted
from tests.agentchaos_otel.campaign.test_report_corpus import episode, llm, tool


def with_root(ep, **attrs):
    return dataclasses.replace(ep, attributes={**ep.attributes, **attrs})


def with_step(ep, index, **attrs):
    steps = list(ep.steps)
    steps[index] = dataclasses.replace(steps[index], attributes={**steps[index].attributes, **attrs})
    return dataclasses.replace(ep, steps=tuple(steps))


def test_guard_names_conditions_and_labels() -> None:
    assert parse_guards("idempotency, response") == ("response", "idempotency")
    assert parse_guards(None) == ()
    with pytest.raises(ValueError, match="unknown guard"):
        parse_guards("response,magic")
    assert expand_conditions(["none", "once_timeout"], ("response",)) == [
        "none", "none+guarded", "once_timeout", "once_timeout+guarded"]
    assert expand_conditions(["none"], ()) == ["none"]
    assert split_label("once_timeout+guarded") == ("once_timeout", True)
    assert EpisodeSpec("a", "t", "llm_empty_single+guarded", 0).plan == "llm_empty_single"
    assert EpisodeSpec("a", "t", "none+guarded", 0).plan is None


def _pair(task: str, plain_ok: bool, guarded_ok: bool, *, doubled: int) -> list:
    faulted = [llm(), tool("place_order", "x", fault="timeout"), llm(), tool("place_order", "x"), llm(0)]
    plain = with_root(episode(task, "once_timeout", 0, plain_ok, faulted), **{A.EPISODE_DOUBLE_APPLIED: doubled})
    guarded = episode(task, "once_timeout+guarded", 0, guarded_ok, faulted + [llm(0)])
    guarded = with_step(guarded, 3, **{A.GUARD_SUPPRESSED: True})
    guarded = with_step(guarded, 5, **{A.GUARD_ACTION: "pass", A.GUARD_ATTEMPT: 1, A.GUARD_FINDINGS: []})
    guarded = with_root(guarded, **{A.EPISODE_DOUBLE_APPLIED: 0, A.EPISODE_GUARDS: ["idempotency"]})
    return [plain, guarded]


def test_guard_measures_on_hand_built_pairs() -> None:
    eps = _pair("t1", False, True, doubled=1) + _pair("t2", True, True, doubled=0) + _pair("t3", False, True,
                                                                                          doubled=2)
    eps.append(episode("lonely", "once_timeout+guarded", 0, True, [llm(0)]))  # no partner: not paired
    g = guard_measures(eps, seed=0, resamples=400)
    c = g.by_condition["once_timeout"]
    assert c.pairs == 3 and c.success_unguarded == M.Rate(1, 3) and c.success_guarded == M.Rate(3, 3)
    assert c.delta.value == pytest.approx(2 / 3) and c.delta.low <= c.delta.value <= c.delta.high
    assert g.by_fault_type["timeout"].pairs == 3
    assert g.unguarded.double_applied == M.Rate(2, 3) and g.unguarded.double_applications == 3
    assert g.guarded.double_applied == M.Rate(0, 3)
    assert g.unguarded.retry == M.Rate(3, 3)  # the agent still repeats; the guard only stops the effect
    assert g.cost.suppressed_tool_calls == 3 and g.cost.guard_retries == 3
    assert g.cost.extra_llm_calls.value == pytest.approx(1.0)
    assert g.guards == ("idempotency",)
    # equal pairs: a zero-width interval comes with its caveat
    same = guard_measures(_pair("t1", True, True, doubled=0) * 1, seed=0, resamples=100)
    assert same.by_condition["once_timeout"].caveat == stats.ZERO_WIDTH_CAVEAT


def test_rates_carry_wilson_intervals_and_small_n_is_flagged() -> None:
    low, high = M.Rate(1, 1).interval
    assert high == pytest.approx(1.0) and low == pytest.approx(0.2065, abs=1e-3)  # not [1, 1]
    assert M.Rate(0, 0).interval == (None, None)
    assert "(small n=4)" in rate(M.Rate(1, 4)) and "small" not in rate(M.Rate(10, 40))
    d = M.Rate(3, 12).as_dict()
    assert d["interval"] == "wilson" and d["low"] < 0.25 < d["high"] and d["small_n"] is False


def test_turn_level_abandonment_and_the_fit_n() -> None:
    gave_up = episode("t1", "once_timeout", 0, False, [llm(), tool("a", "x", fault="timeout"), llm(0), llm(0)])
    went_on = episode("t2", "once_timeout", 0, True, [llm(), tool("a", "x", fault="timeout"), llm(), tool("b"),
                                                       llm(0)])
    clean = [episode(f"t{i}", "none", 0, True, [llm(), tool("a", "x"), llm(0)]) for i in (1, 2)]
    turn = M.turn_abandonment([gave_up, went_on, *clean])
    assert turn["timeout"] == M.Rate(1, 2) and turn["clean"] == M.Rate(2, 2)
    m = M.compute_all([gave_up, went_on, *clean], seed=0, resamples=50)
    assert m.turn_abandonment == turn
    e = m.contributions.effects.get("timeout")
    if e is not None:
        assert e.n == m.contributions.episodes  # the fit's n, not the episodes containing the type
    assert m.contributions.with_type["timeout"] == 2
    assert "retry" in m.units and any("small n" in w for w in m.warnings)


@pytest.mark.skipif(not bfcl_available(), reason="BFCL not installed")
def test_small_guarded_bfcl_campaign_and_report(tmp_path: Path) -> None:
    db = tmp_path / "traces.duckdb"
    runner = CliRunner()
    run = runner.invoke(mounted(), ["campaign", "run", "--agent", "bfcl", "--tasks", "3", "--conditions",
                                    "none,once_timeout,llm_empty_single", "--seeds", "0", "--workers", "2",
                                    "--guard", "response,idempotency", "--db", str(db), "--no-progress"])
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout.strip().splitlines()[-1])["ran"] == 18
    assert campaign_runs(db)[-1]["args"]["extra"]["guards"] == ["response", "idempotency"]
    rep = runner.invoke(mounted(), ["report", str(db), "--json", "--resamples", "100"])
    assert rep.exit_code == 0, rep.output
    out = json.loads(rep.stdout)
    assert out["label"] == "SIMULATED"
    g = out["guards"]
    assert set(g["by_condition"]) == {"none", "once_timeout", "llm_empty_single"}
    assert all(p["pairs"] == 3 for p in g["by_condition"].values())
    assert g["guards"] == ["idempotency", "response"]
    # the injected empty answer is what the response guard saw and retried
    assert g["cost"]["findings"].get("empty_answer", 0) >= 1 and g["cost"]["guard_retries"] >= 1
    assert g["unguarded"]["double_applied"]["total"] == 9
    text = runner.invoke(mounted(), ["report", str(db), "--resamples", "100"])
    assert "Guards (idempotency, response)" in text.stdout and "SIMULATED" in text.stdout
