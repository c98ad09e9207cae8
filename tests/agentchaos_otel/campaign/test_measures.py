from __future__ import annotations

import json

import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.campaign import measures as M
from tests.agentchaos_otel.campaign.test_report_corpus import episode, llm, synthetic_study, tool


def test_retry_counts_identical_call_in_next_three_moves_only() -> None:
    steps = [llm(2), tool("a", "x"), tool("a", "x"),  # same move: issued before the result was seen
             llm(), tool("b", "y"), llm(), tool("b", "z"), llm(), tool("c", "q"), llm(), tool("a",
                                                                                              "x"), llm(0)]
    ep = episode("t", "none", 0, True, steps)
    assert M.retried(ep, 1) is False  # a/x reappears in the same move and only 4 moves later
    steps[6] = tool("a", "x")
    ep = episode("t", "none", 0, True, steps)
    assert M.retried(ep, 1) is True   # now 2 moves later
    assert M.retried(ep, 4) is False  # b/y never again


def test_retry_needs_an_argument_digest() -> None:
    ep = episode("t", "none", 0, True, [llm(), tool("a", None), llm(), tool("a", None), llm(0)])
    assert M.retried(ep, 1) is None
    assert M.retry_rates([ep]) == {}


def test_retry_rates_by_type_and_unfaulted_reference() -> None:
    retry = episode("t1", "independent", 0, False,
                    [llm(), tool("a", "x", fault="timeout"), llm(), tool("a", "x"), llm(0)])
    no_retry = episode("t2", "independent", 0, True,
                       [llm(), tool("a", "x", fault="timeout"), llm(), tool("b", "x"), llm(0)])
    no_effect = episode("t3", "independent", 0, True,
                        [llm(), tool("a", "x", fault="timeout", changed=False), llm(), tool("a", "x"),
                         llm(0)])
    rates = M.retry_rates([retry, no_retry, no_effect])
    assert rates["timeout"] == M.Rate(1, 2)
    # Unfaulted tool steps: the retried a/x of t1, b/x of t2, and a/x of t3 (its first step fired
    # without effect and belongs to neither group); none of them is repeated afterwards.
    assert rates["unfaulted"] == M.Rate(0, 3)
    assert list(rates) == ["timeout", "unfaulted"]


def test_paired_difference_all_fail_under_fault() -> None:
    eps = []
    for t in range(10):
        eps.append(episode(f"t{t}", "none", 0, True, [llm(0)]))
        eps.append(episode(f"t{t}", "bursty", 0, False, [llm(), tool(fault="timeout"), llm(0)]))
    eps.append(episode("lonely", "bursty", 1, True, [llm(0)]))  # no clean partner: not paired
    d = M.paired_differences(eps, seed=0, resamples=500)["bursty"]
    assert d.pairs == 10
    assert d.difference.value == pytest.approx(-1.0)
    assert d.difference.low == pytest.approx(-1.0) and d.difference.high == pytest.approx(-1.0)


def test_paired_difference_interval_is_seeded_and_covers_the_estimate() -> None:
    eps = synthetic_study(n_tasks=40)
    a = M.paired_differences(eps, seed=1)
    b = M.paired_differences(eps, seed=1)
    assert a == b
    # The seed drives the resampling; the estimates themselves do not move.
    c, d = M.paired_differences(eps, seed=1, resamples=30), M.paired_differences(eps, seed=2, resamples=30)
    assert c != d
    assert all(c[k].difference.value == d[k].difference.value == a[k].difference.value for k in a)
    for d in a.values():
        assert d.difference.low <= d.difference.value <= d.difference.high
        assert d.difference.value < 0  # the synthetic agent is hurt by faults
        assert d.pairs == 80


def test_paired_difference_without_clean_partner_is_empty() -> None:
    eps = [episode("t", "bursty", 0, True, [llm(0)])]
    d = M.paired_differences(eps)["bursty"]
    assert d.pairs == 0 and d.difference.value is None


def test_triggered_only_drops_faults_that_changed_nothing() -> None:
    eps = [episode("t1", "none", 0, True, [llm(0)]),
           episode("t1", "bursty", 0, False, [llm(), tool(fault="timeout"), llm(0)]),
           episode("t2", "none", 0, True, [llm(0)]),
           episode("t2", "bursty", 0, True, [llm(), tool(fault="timeout", changed=False), llm(0)])]
    assert M.paired_differences(eps, resamples=100)["bursty"].difference.value == pytest.approx(-0.5)
    trig = M.paired_differences(eps, resamples=100, triggered_only=True)["bursty"]
    assert trig.pairs == 1 and trig.difference.value == pytest.approx(-1.0)


def test_contributions_separate_harmful_from_harmless_types() -> None:
    eps = synthetic_study(n_tasks=150, seeds=(0, 1))
    c = M.type_contributions(eps, seed=0, resamples=200)
    assert set(c.types) == set(M_TYPES)
    for harmful in ("rate_limit", "timeout"):
        e = c.effects[harmful]
        assert e.value < -0.1 and e.high < 0, (harmful, e)
    for harmless in ("wrong_value", "key_rename"):
        e = c.effects[harmless]
        assert e.low < 0 < e.high, (harmless, e)
        assert abs(e.value) < abs(c.effects["rate_limit"].value)
    assert c.resamples_used == 200


M_TYPES = ("timeout", "rate_limit", "empty", "malformed_json", "truncated", "key_rename", "wrong_value")


def test_contributions_degenerate_inputs_explain_themselves() -> None:
    clean_only = [episode(f"t{i}", "none", 0, i % 2 == 0, [llm(0)]) for i in range(6)]
    assert M.type_contributions(clean_only).note.startswith("no triggered faults")
    same = [episode(f"t{i}", "bursty", 0, True, [llm(), tool(fault="timeout"), llm(0)]) for i in range(6)]
    c = M.type_contributions(same, resamples=10)
    assert c.effects == {} and "same outcome" in c.note


def test_single_fault_success_counts_exactly_one_changed_fault() -> None:
    eps = [episode("t1", "none", 0, True, [llm(0)]),
           episode("t2", "none", 0, False, [llm(0)]),
           episode("t1", "independent", 0, False, [llm(), tool(fault="empty"), llm(0)]),
           episode("t2", "independent", 0, True,
                   [llm(), tool(fault="empty"), llm(), tool(fault="empty", changed=False), llm(0)]),
           episode("t3", "independent", 0, True, [llm(), tool(fault="empty"), llm(), tool(fault="timeout"),
                                                  llm(0)])]
    s = M.single_fault_success(eps, resamples=100)
    assert s["empty"].n == 2 and s["empty"].value == pytest.approx(0.5)
    assert s["clean"].n == 2 and s["clean"].value == pytest.approx(0.5)
    assert "timeout" not in s
    assert list(s)[-1] == "clean"


def test_abandonment_is_anchored_on_the_fault_with_paired_clean_reference() -> None:
    gave_up = episode("t1", "independent", 0, False, [llm(), tool("a", "1", fault="empty"), llm(0)])
    carried_on = episode("t2", "independent", 0, False,
                         [llm(), tool("a", "1", fault="empty"), llm(), tool("b", "2"), llm(0)])
    succeeded = episode("t3", "independent", 0, True, [llm(), tool("a", "1", fault="empty"), llm(0)])
    # Clean partners: t1's clean run also stopped after its first tool call and failed; t2's did not.
    clean1 = episode("t1", "none", 0, False, [llm(), tool("a", "1"), llm(0)])
    clean2 = episode("t2", "none", 0, False, [llm(), tool("a", "1"), llm(), tool("c", "3"), llm(0)])
    rates = M.abandonment([gave_up, carried_on, succeeded, clean1, clean2])
    assert rates["empty"] == M.Rate(1, 3)
    assert rates["clean"] == M.Rate(1, 2)


def test_burst_run_lengths_follow_the_schedule() -> None:
    eps = synthetic_study(n_tasks=30)
    b = M.burst_run_lengths(eps)
    assert b["none"].runs == 0 and b["none"].mean is None and b["none"].rate == 0
    assert b["bursty"].longest <= 3 and b["bursty"].mean > b["independent"].mean
    assert M.run_lengths([True, True, False, True, False, False, True, True, True]) == [2, 1, 3]


def test_llm_faults_run_over_llm_steps() -> None:
    ep = episode("t", "llm_error_burst", 0, False,
                 [llm(1, fault="error"), tool("a"), llm(1, fault="error"), tool("b"), llm(0, fault="error")])
    b = M.burst_run_lengths([ep])["llm_error_burst"]
    assert (b.runs, b.mean, b.eligible_steps) == (1, 3.0, 3)


def test_condition_summary_counts_crashes_and_trigger_status() -> None:
    eps = [episode("t1", "bursty", 0, False, [llm(), tool(fault="timeout"), llm(0)]),
           episode("t2", "bursty", 0, True, [llm(), tool(fault="timeout", changed=False), llm(0)]),
           episode("t3", "bursty", 0, None, [llm(0)], error="RuntimeError: boom"),
           episode("t4", "bursty", 0, False, [llm(), tool(), llm(0)], error="APIError: 500", crashed=False)]
    s = M.condition_summaries(eps, resamples=100)["bursty"]
    assert (s.episodes, s.scored, s.successes) == (4, 3, 1)
    assert (s.triggered, s.fired_not_changed, s.no_fault, s.crashes, s.errors) == (1, 1, 2, 1, 2)
    assert [c.task_id for c in M.crashes(eps)] == ["t3"]


def test_compute_all_on_degenerate_corpora_warns_instead_of_failing() -> None:
    empty = M.compute_all([], resamples=50)
    assert empty.episodes == 0 and "no episodes in the corpus" in empty.warnings
    json.dumps(empty.as_dict())
    clean = M.compute_all([episode(f"t{i}", "none", 0, True, [llm(0)]) for i in range(3)], resamples=50)
    assert any("only the 'none' condition" in w for w in clean.warnings)
    assert clean.paired == {} and clean.retry == {}
    nofault = M.compute_all([episode("t", "bursty", 0, True, [llm(0)])], resamples=50)
    assert any("no clean" in w for w in nofault.warnings)
    assert any("no fault changed" in w for w in nofault.warnings)


def test_compute_all_is_a_pure_function_of_episodes_and_seed() -> None:
    eps = synthetic_study(n_tasks=20, simulated=True)
    a = M.compute_all(eps, seed=5, resamples=100).as_dict()
    b = M.compute_all(list(reversed(eps)), seed=5, resamples=100).as_dict()
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert a["simulated"] is True
    assert a["resamples"] == 100


def test_default_resamples_meet_the_study_minimum() -> None:
    assert M.DEFAULT_RESAMPLES >= 2000


def test_logistic_fit_recovers_closed_form_log_odds() -> None:
    import numpy as np

    # One binary covariate: the unpenalised MLE is intercept = logit(p0), slope = logit(p1) - logit(p0).
    x = np.array([[0.0]] * 10 + [[1.0]] * 10)
    y = np.array([1.0] * 7 + [0.0] * 3 + [1.0] * 2 + [0.0] * 8)
    beta = M.fit_logistic(x, y, l2=0.0)

    def logit(p: float) -> float:
        return float(np.log(p / (1 - p)))

    assert beta[0] == pytest.approx(logit(0.7), abs=1e-6)
    assert beta[1] == pytest.approx(logit(0.2) - logit(0.7), abs=1e-6)


def test_logistic_fit_stays_finite_under_separation() -> None:
    import numpy as np

    x = np.array([[0.0], [0.0], [1.0], [1.0], [0.0]])
    y = np.array([1.0, 1.0, 0.0, 0.0, 0.0])
    beta = M.fit_logistic(x, y)
    assert np.all(np.isfinite(beta)) and beta[1] < -3


def test_llm_and_tool_faults_of_the_same_type_are_kept_apart() -> None:
    eps = []
    for t in range(40):
        eps.append(episode(f"t{t}", "none", 0, t % 4 != 0, [llm(), tool("a", "1"), llm(0)]))
        # Tool timeouts: retried and mildly harmful; LLM timeouts: always fatal.
        eps.append(episode(f"t{t}", "independent", 0, t % 3 != 0,
                           [llm(), tool("a", "1", fault="timeout"), llm(), tool("a", "1"), llm(0)]))
        eps.append(episode(f"t{t}", "llm_timeout_single", 0, t % 10 == 0,
                           [llm(1, fault="timeout"), tool("a", "1"), llm(0)]))
    single = M.single_fault_success(eps, resamples=50)
    assert single["timeout"].value == pytest.approx(26 / 40)
    assert single["llm/timeout"].value == pytest.approx(4 / 40)
    assert set(M.retry_rates(eps)) == {"timeout", "unfaulted"}
    c = M.type_contributions(eps, resamples=100)
    assert c.types == ("llm/timeout", "timeout")
    assert c.effects["llm/timeout"].value < c.effects["timeout"].value < 0
    assert set(M.abandonment(eps)) == {"timeout", "llm/timeout", "clean"}


def test_mcp_protocol_faults_are_filed_under_their_own_prefix() -> None:
    assert M.fault_key("timeout", A.TARGET_MCP) == "mcp/timeout"
    assert M.fault_key("timeout", A.TARGET_TOOL_RESULT) == "timeout"
    assert M.fault_key("timeout", None) == "timeout"
    assert M.fault_key("timeout", "content") == "llm/timeout"
    assert [M.family(k) for k in ("mcp/timeout", "llm/timeout", "timeout")] == ["mcp", "llm", "tool"]

    eps = []
    for t in range(30):
        eps.append(episode(f"t{t}", "none", 0, t % 4 != 0, [llm(), tool("a", "1"), llm(0)]))
        on_tool = episode(f"t{t}", "independent", 0, t % 3 != 0,
                          [llm(), tool("a", "1", fault="timeout"), llm(), tool("a", "1"), llm(0)])
        on_mcp = episode(f"t{t}", "mcp_timeout_single", 0, t % 5 == 0,
                         [llm(), tool("a", "1", fault="timeout"), llm(), tool("a", "1"), llm(0)])
        on_mcp.steps[1].attributes[A.FAULT_TARGET] = A.TARGET_MCP
        eps += [on_tool, on_mcp]
    assert M.fault_counts(eps[2]) == {"mcp/timeout": 1}
    assert set(M.single_fault_success(eps, resamples=20)) == {"timeout", "mcp/timeout", "clean"}
    assert set(M.retry_rates(eps)) == {"timeout", "mcp/timeout", "unfaulted"}
    assert M.type_contributions(eps, resamples=50).types == ("mcp/timeout", "timeout")


def test_success_with_and_without_retry() -> None:
    eps = [episode("t1", "independent", 0, False,
                   [llm(), tool("a", "x", fault="timeout"), llm(), tool("a", "x"), llm(0)]),
           episode("t2", "independent", 0, True,
                   [llm(), tool("a", "x", fault="timeout"), llm(), tool("b", "y"), llm(0)]),
           episode("t3", "independent", 0, False, [llm(), tool("a", "x", fault="empty"), llm(0)]),
           episode("t4", "none", 0, True, [llm(), tool("a", "x"), llm(), tool("a", "x"), llm(0)])]
    assert M.success_by_retry(eps) == {"with_retry": M.Rate(0, 1), "without_retry": M.Rate(1, 2)}


def test_mixed_simulated_and_real_corpus_is_flagged() -> None:
    eps = [episode("t1", "none", 0, True, [llm(0)], simulated=True), episode("t2", "none", 0, True, [llm(0)])]
    m = M.compute_all(eps, resamples=20)
    assert m.simulated is True
    assert any("mixes simulated and real-model" in w for w in m.warnings)


def test_once_conditions_group_pair_and_order_after_the_study_conditions() -> None:
    eps = []
    for t in range(6):
        eps.append(episode(f"t{t}", "none", 0, True, [llm(), tool("a", "x"), llm(0)]))
        eps.append(episode(f"t{t}", "once_timeout", 0, t % 2 == 0,
                           [llm(), tool("a", "x", fault="timeout"), llm(), tool("a", "x"), llm(0)]))
        eps.append(episode(f"t{t}", "once_empty", 0, True, [llm(), tool("a", "x", fault="empty"), llm(0)]))
        eps.append(episode(f"t{t}", "llm_error_single", 0, True, [llm(0)]))
        eps.append(episode(f"t{t}", "bursty", 0, True, [llm(0)]))
    conds = M.condition_summaries(eps, seed=0, resamples=100)
    assert list(conds) == ["none", "bursty", "once_timeout", "once_empty", "llm_error_single"]
    assert conds["once_timeout"].episodes == 6 and conds["once_timeout"].successes == 3
    paired = M.paired_differences(eps, seed=0, resamples=100)
    assert paired["once_timeout"].pairs == 6 and paired["once_timeout"].difference.value == pytest.approx(-0.5)
    bursts = M.burst_run_lengths(eps)
    assert bursts["once_timeout"].runs == 6 and bursts["once_timeout"].longest == 1
    assert M.retry_rates([e for e in eps if e.condition == "once_timeout"])["timeout"] == M.Rate(6, 6)


def test_episode_frame_rows_are_canonical_with_pair_keys_and_single_faults() -> None:
    eps = [episode("t2", "bursty", 1, False, [llm(), tool(fault="timeout"), llm(0)]),
           episode("t1", "none", 0, None, [llm(0)]),
           episode("t1", "bursty", 0, True, [llm(), tool(fault="timeout"), llm(), tool(fault="empty"), llm(0)])]
    frame = M.episode_frame(eps)
    assert frame["condition"].to_list() == ["bursty", "bursty", "none"]
    assert frame["pair"].to_list() == [repr(("ref", "t1", 0)), repr(("ref", "t2", 1)), repr(("ref", "t1", 0))]
    assert frame["success"].to_list() == [1.0, 0.0, None]
    assert frame["single_fault"].to_list() == [None, "timeout", None]
    assert frame["moves"].to_list() == [3, 2, 1]
    assert M.episode_frame([]).is_empty()


def test_paired_difference_averages_a_rerun_key_once() -> None:
    eps = [episode("t1", "none", 0, True, [llm(0)]),
           episode("t1", "none", 0, False, [llm(0)]),  # a re-run of the same key: clean success 0.5
           episode("t1", "bursty", 0, False, [llm(), tool(fault="timeout"), llm(0)]),
           episode("t2", "none", 0, True, [llm(0)]),
           episode("t2", "bursty", 0, True, [llm(), tool(fault="timeout"), llm(0)])]
    d = M.paired_differences(eps, resamples=50)["bursty"]
    assert d.pairs == 2
    assert d.clean_success == pytest.approx(0.75) and d.faulted_success == pytest.approx(0.5)
    assert d.difference.value == pytest.approx(-0.25)
