"""Scoring against ground truth, and rule-based accuracy on simulated corpora (seen and held-out)."""

from __future__ import annotations

import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.records import FaultLabel
from benchmarks.corpora import synthetic
from benchmarks.corpora.synthetic import episode_of, fault_attrs, llm_record, tool_record
from diagnosers.base import Diagnosis
from diagnosers.baseline import TextOnlyDiagnoser
from diagnosers.evaluate import evaluate, evaluation_set, ground_truth, score
from diagnosers.rules import RuleDiagnoser
from diagnosers.taxonomy import NONE_FOUND


def _d(trace: str, ftype: str, step: int | None) -> Diagnosis:
    return Diagnosis(trace, "t", "rule", ftype, "content", step, None, 0.5, "")


def test_score_counts_type_step_joint_and_confusion() -> None:
    truths = {"a": FaultLabel(2, "s2", "error"), "b": FaultLabel(1, "s1", "truncate"),
              "c": FaultLabel(4, "s4", "truncate"), "d": FaultLabel(0, "s0", "empty")}
    diags = [_d("a", "error", 2), _d("b", "truncate", 3), _d("c", "none_found", None), _d("d", "error", 0),
             _d("zz", "error", 1)]  # no truth: ignored
    s = score("rule", truths, diags, n_boot=500, seed=1)
    assert s.n == 4
    assert s.type_accuracy.value == pytest.approx(0.5)
    assert s.step_accuracy.value == pytest.approx(0.5)
    assert s.joint_accuracy.value == pytest.approx(0.25)
    assert s.confusion == {"empty": {"error": 1}, "error": {"error": 1},
                           "truncate": {"truncate": 1, "none_found": 1}}
    assert s.per_type["truncate"] == {"n": 2, "accuracy": 0.5}
    assert s.truncation_found == pytest.approx(0.5) and s.none_found == 1
    assert 0.0 <= s.type_accuracy.low <= 0.5 <= s.type_accuracy.high <= 1.0
    again = score("rule", truths, diags, n_boot=500, seed=1)
    assert again.type_accuracy == s.type_accuracy  # seeded bootstrap
    d = s.to_dict()
    assert d["published"]["type_accuracy"] == pytest.approx(0.5245)


def test_ground_truth_is_first_changed_fault_and_set_is_failed_triggered() -> None:
    steps = [llm_record(0, content="ok", fault=fault_attrs("error", "content", changed=False)),
             llm_record(1, content="x", fault=fault_attrs("truncate", "content")),
             llm_record(2, content="y", fault=fault_attrs("empty", "content"))]
    ep = episode_of(steps)
    assert ground_truth(ep) == FaultLabel(1, "span0001", "truncate", "content", "hand-built")
    ok = episode_of(steps, success=True, trace_id="ok")
    untriggered = episode_of([llm_record(0, fault=fault_attrs("error", "content", changed=False))],
                             trace_id="u")
    assert [e.trace_id for e in evaluation_set([ep, ok, untriggered])] == ["trace-1"]


WEATHER = {"city": "Oslo", "unit": "c"}
RESULT = {"city": "Oslo", "temperature": 4.5}


def _retry(step: int, **kw: object) -> object:
    """An LLM step sent with the same request body as the one before it (an SDK retry)."""
    return llm_record(step, extra={A.REQUEST_DIGEST: "req-same"}, **kw)  # type: ignore[arg-type]


def test_ground_truth_skips_faults_that_were_absorbed() -> None:
    """docs/taxonomy.md, root cause by effect: the truth of an injected corpus is the first changed
    fault that was not absorbed; a failure whose faults were all absorbed has none."""
    sdk = [_retry(0, status_code=429, fault=fault_attrs("rate_limit", "http")), _retry(1, content="ok"),
           llm_record(2, content="wrong answer")]
    ep = episode_of(sdk)
    assert ground_truth(ep) is None and evaluation_set([ep]) == []
    from diagnosers.evaluate import episode_categories

    assert episode_categories([ep], None) == {"trace-1": "unfaulted_failure"}
    assert episode_categories([episode_of(sdk, success=True)], None) == {"trace-1": "benign_success"}
    # The SDK gave up (every attempt failed): the first fault is the root cause.
    gave_up = [_retry(0, status_code=503, fault=fault_attrs("http_error", "http")),
               _retry(1, status_code=503, fault=fault_attrs("http_error", "http"))]
    assert ground_truth(episode_of(gave_up)) == FaultLabel(0, "span0000", "http_error", "http", "hand-built")
    # A different fault that persisted on every retry is what mattered.
    persisted = [gave_up[0], _retry(1, status_code=408, fault=fault_attrs("timeout", "http")),
                 _retry(2, status_code=408, fault=fault_attrs("timeout", "http"))]
    assert ground_truth(episode_of(persisted)).step == 1  # type: ignore[union-attr]
    # A tool call repeated with the same arguments that answered absorbs the fault; a later one is the root.
    TOOL_TIMEOUT = fault_attrs("timeout", "tool_result")  # noqa: N806
    tool = [llm_record(0, content=None, tool_calls=[("get_weather", WEATHER)]),
            tool_record(1, "get_weather", {"error": "timeout"}, args=WEATHER, fault=TOOL_TIMEOUT),
            llm_record(2, content=None, tool_calls=[("get_weather", WEATHER)]),
            tool_record(3, "get_weather", RESULT, args=WEATHER),
            llm_record(4, content="4.5", finish="length", fault=fault_attrs("truncate", "content"))]
    assert ground_truth(episode_of(tool)) == FaultLabel(4, "span0004", "truncate", "content", "hand-built")
    # ... unless the call is not idempotent: the tool ran both times (our injector replaces only
    # what the agent is shown), so the repeat applied it twice.
    book = {"flight_id": "LH1"}
    twice = [llm_record(0, content=None, tool_calls=[("book_flight", book)]),
             tool_record(1, "book_flight", {"error": "timeout"}, args=book, fault=TOOL_TIMEOUT),
             llm_record(2, content=None, tool_calls=[("book_flight", book)]),
             tool_record(3, "book_flight", {"booking": "B1"}, args=book), llm_record(4, content="Booked.")]
    assert ground_truth(episode_of(twice)).step == 1  # type: ignore[union-attr]
    # A delay the agent waited out is absorbed; one it gave up on (its tool calls never ran) is not.
    slow = fault_attrs("latency", "http")
    waited = [llm_record(0, content=None, tool_calls=[("get_weather", WEATHER)], fault=slow),
              tool_record(1, "get_weather", RESULT, args=WEATHER), llm_record(2, content="4.5")]
    assert ground_truth(episode_of(waited)) is None
    abandoned = [llm_record(0, content="Let me look."), llm_record(1, content=None,
                                                                  tool_calls=[("get_weather", WEATHER)], fault=slow)]
    assert ground_truth(episode_of(abandoned)).step == 1  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def seen_corpus() -> list:
    return synthetic.make_corpus(4, 1)


@pytest.fixture(scope="module")
def heldout_corpus() -> list:
    return synthetic.make_corpus(3, 1, heldout=True)


# Catalog configurations whose label the rules name only with more evidence than these episodes
# carry (docs/taxonomy.md): a value mentioned nowhere in the conversation is weak evidence. (A slow
# call the agent went on from is absorbed, so it is no root cause in the truth either.)
TAXONOMY_READS_OTHERWISE = ("compound_stale_data", "compound_wrong_entity")


def _agrees(form: str) -> bool:
    return not form.startswith(TAXONOMY_READS_OTHERWISE)


def test_rule_based_accuracy_on_the_simulated_corpus(seen_corpus: list) -> None:
    scores, diags = evaluate(seen_corpus, [RuleDiagnoser(), TextOnlyDiagnoser()], n_boot=300)
    rule, text = scores
    assert rule.n >= 100
    assert rule.type_accuracy.value >= 0.8
    agreeing = [v for f, v in rule.per_form.items() if _agrees(f)]
    n = sum(v["n"] for v in agreeing)
    assert n >= 90 and sum(v["type_accuracy"] * v["n"] for v in agreeing) / n >= 0.95
    assert sum(v["step_accuracy"] * v["n"] for v in agreeing) / n >= 0.95
    assert rule.truncation_found is not None and rule.truncation_found >= 0.9
    assert text.type_accuracy.value < rule.type_accuracy.value - 0.3
    # every category of episode is counted, and false blame is reported for each non-faulted one
    assert rule.n_by_category["clean_success"] > 10 and rule.n_by_category["unfaulted_failure"] > 10
    for cat in ("clean_success", "unfaulted_failure"):
        assert rule.false_blame[cat].value <= 0.05, cat
    # with the outcome hidden the evidence alone decides, and still names no fault on clean runs
    assert rule.false_blame_hidden["clean_success"].value <= 0.05
    assert sum(b["n"] for b in rule.reliability) == rule.n - sum(
        1 for d in diags["rule"] if d.fault_type == NONE_FOUND and "below confidence" not in d.evidence)
    assert {d.method for d in diags["rule"]} == {"rule"}
    # the threshold sweep: a higher threshold answers less and blames no more
    sweep = rule.thresholds
    assert [r["threshold"] for r in sweep] == sorted(r["threshold"] for r in sweep)
    assert all(a["answered"] >= b["answered"] for a, b in zip(sweep, sweep[1:], strict=False))
    assert all(a["false_blame_unfaulted_failure"] >= b["false_blame_unfaulted_failure"]
               for a, b in zip(sweep, sweep[1:], strict=False))


def test_categories_come_from_outcome_and_triggered_faults_or_the_label_file() -> None:
    from diagnosers.evaluate import episode_categories

    clean = episode_of([llm_record(0)], success=True, trace_id="a")
    benign = episode_of([llm_record(0, fault=fault_attrs("error", "content"))], success=True, trace_id="b")
    faulted = episode_of([llm_record(0, fault=fault_attrs("error", "content"))], success=False, trace_id="c")
    unfaulted = episode_of([llm_record(0)], success=False, trace_id="d")
    eps = [clean, benign, faulted, unfaulted]
    assert episode_categories(eps, None) == {"a": "clean_success", "b": "benign_success", "c": "faulted_failure",
                                             "d": "unfaulted_failure"}
    given = {"a": "benign_success"}
    assert episode_categories(eps, None, given)["a"] == "benign_success"


def test_rule_based_accuracy_on_held_out_variants(heldout_corpus: list) -> None:
    (rule,), _ = evaluate(heldout_corpus, [RuleDiagnoser()], n_boot=300)
    assert rule.n >= 80
    assert rule.type_accuracy.value >= 0.8
    agreeing = [v for f, v in rule.per_form.items() if _agrees(f)]
    n = sum(v["n"] for v in agreeing)
    assert sum(v["type_accuracy"] * v["n"] for v in agreeing) / n >= 0.95
    for t in ("http_error", "connection", "stream_cut"):
        assert rule.per_type[t]["accuracy"] >= 0.9


def test_synthetic_corpus_is_deterministic() -> None:
    a = synthetic.make_episode("task-7", 3, "tools_bursty")
    b = synthetic.make_episode("task-7", 3, "tools_bursty")
    assert a == b
    assert synthetic.make_episode("task-7", 4, "tools_bursty") != a
