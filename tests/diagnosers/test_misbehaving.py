"""Diagnosis on the misbehaving-provider corpus, scored through --truth.

The corpus (benchmarks/corpora/misbehaving) is written from providers' documented error formats,
recorded with plan=None and driven by a generic openai-SDK loop; ground truth (with each
episode's category) is only in its label file. It is development data: the rules were written
beside it. SIMULATED.
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentchaos_otel.records import EpisodeTrace
from benchmarks.corpora.misbehaving.corpus import run_corpus
from benchmarks.corpora.misbehaving.forms import LLM_FORMS, TOOL_FORMS
from diagnosers.cli import app
from diagnosers.norms import ToolNorms
from diagnosers.tracefile import load
from diagnosers.truth import read_labels, resolve


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, int]]:
    d = tmp_path_factory.mktemp("misbehaving")
    db, labels = d / "mb.duckdb", d / "mb.jsonl"
    counts = run_corpus(db, labels, 60, seed=2)
    return db, labels, counts


def _scores(*args: str) -> dict[str, Any]:
    res = CliRunner().invoke(app, ["run", *args, "--json", "--bootstrap", "200", "--no-write"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_corpus_has_no_ground_truth_in_the_trace_and_labels_match_steps(corpus: Any) -> None:
    db, labels, counts = corpus
    eps = load(db)
    assert len(eps) == 60 and counts["faulted"] >= 25
    assert all(not ep.faults() for ep in eps)  # plan=None: nothing injected, nothing recorded
    rows = read_labels(labels)
    by_task = {ep.task_id: ep for ep in eps}
    assert {r["category"] for r in rows} >= {"faulted_failure", "clean_success", "unfaulted_failure"}
    for row in rows:
        ep = by_task[row["task_id"]]
        if row["fault_type"] == "none":
            assert ep.success is (row["category"] != "unfaulted_failure")
            continue
        assert row["category"] == "faulted_failure" and ep.success is False
        kind = "tool" if row["target"] == "tool_result" else "llm"
        assert [s.kind for s in ep.steps if s.step == row["step"]] == [kind]


def test_rules_meet_the_targets_on_the_misbehaving_corpus(corpus: Any) -> None:
    db, labels, _ = corpus
    out = _scores(str(db), "--evaluate", "--truth", str(labels))
    rule = out["scores"][0]
    assert out["truth"] == str(labels) and rule["method"] == "rule" and rule["n"] >= 25
    assert out["simulated"] is True
    assert rule["type_accuracy"]["value"] >= 0.9
    assert rule["step_accuracy"]["value"] >= 0.9
    blame, n = rule["false_blame"], rule["n_by_category"]
    assert n["clean_success"] >= 10 and blame["clean_success"]["value"] == 0.0
    assert blame.get("unfaulted_failure", {"value": 0.0})["value"] <= 0.1
    assert rule["reliability"] and all(b["n"] > 0 for b in rule["reliability"])
    assert set(rule["per_target"]) >= {"http", "content", "tool_result"}


def _stretched(ep: EpisodeTrace, factor: float, only: int | None = None) -> EpisodeTrace:
    """The episode as a loaded machine records it: every call (or one) ``factor`` times slower."""
    steps, t = [], ep.steps[0].start_ns if ep.steps else 0
    for s in ep.steps:
        f = factor if only is None or s.step == only else 1.0
        dur = int((s.end_ns - s.start_ns) * f)
        steps.append(replace(s, start_ns=t, end_ns=t + dur))
        t += dur + 1000
    return replace(ep, steps=tuple(steps))


def test_machine_load_changes_no_diagnosis(corpus: Any) -> None:
    """Latency is judged against the episode's own calls and by its effect, never a clock: every
    call slower, or any one call of an episode stalled, names no latency fault where there was
    none, whether the diagnoser knows the outcome or not."""
    from diagnosers.base import diagnose_episodes
    from diagnosers.evaluate import outcome_hidden
    from diagnosers.rules import RuleDiagnoser

    db, _, _ = corpus
    eps = load(db)
    rules = RuleDiagnoser(norms=ToolNorms.from_store(db))  # as `diagnose` reads the store
    before = {d.trace_id: (d.fault_type, d.step) for d in diagnose_episodes(rules, eps)}
    slow = [_stretched(ep, 20.0) for ep in eps]
    assert {d.trace_id: (d.fault_type, d.step) for d in diagnose_episodes(rules, slow)} == before
    for ep in eps:
        for s in ep.steps:
            if s.kind != "llm":
                continue
            for candidate in (_stretched(ep, 80.0, only=s.step), outcome_hidden(_stretched(ep, 80.0, only=s.step))):
                d = diagnose_episodes(rules, [candidate])[0]
                if candidate.success is not False or before[ep.trace_id][0] == "none_found":
                    assert d.fault_type != "latency", (ep.task_id, s.step)


def test_csv_labels_keyed_by_trace_and_span_give_the_same_report(corpus: Any, tmp_path: Path) -> None:
    db, labels, _ = corpus
    eps = {ep.task_id: ep for ep in load(db)}
    path = tmp_path / "labels.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["trace_id", "type", "span_id"])
        w.writeheader()
        for row in read_labels(labels):
            ep = eps[row["task_id"]]
            span = next((s.span_id for s in ep.steps if s.step == row.get("step")), "")
            w.writerow({"trace_id": ep.trace_id, "type": row["fault_type"], "span_id": span})
    a = _scores(str(db), "--evaluate", "--truth", str(labels))["scores"][0]
    b = _scores(str(db), "--evaluate", "--truth", str(path))["scores"][0]
    for key in ("n", "type_accuracy", "step_accuracy", "joint_accuracy", "confusion"):
        assert a[key] == b[key]


def test_bad_label_files_are_one_clear_error(corpus: Any, tmp_path: Path) -> None:
    db, labels, _ = corpus
    first = read_labels(labels)[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"task_id": first["task_id"], "fault_type": "meteor", "step": 1}) + "\n")
    res = CliRunner().invoke(app, ["run", str(db), "--evaluate", "--truth", str(bad)])
    # A label file that cannot be used is a failure of the input (1); a wrong option is usage (2).
    assert res.exit_code == 1 and "unknown fault type 'meteor'" in res.output
    res = CliRunner().invoke(app, ["run", str(db), "--truth", str(labels)])
    assert res.exit_code == 2 and "--evaluate" in res.output


def test_every_label_of_the_corpus_is_in_the_taxonomy(corpus: Any) -> None:
    from diagnosers.taxonomy import FAULT_TYPES

    assert {f.fault_type for f in LLM_FORMS + TOOL_FORMS} <= set(FAULT_TYPES)
    db, labels, _ = corpus
    truths = resolve(load(db), read_labels(labels))
    assert sum(t is not None for t in truths.values()) >= 25


def test_same_diagnoses_with_openinference_also_tracing(corpus: Any, tmp_path: Path) -> None:
    """Item 5: another GenAI instrumentation tracing the same calls changes no rule diagnosis."""
    from openinference.instrumentation.openai import OpenAIInstrumentor

    from diagnosers.base import diagnose_episodes
    from diagnosers.rules import RuleDiagnoser

    plain, both = tmp_path / "plain.duckdb", tmp_path / "both.duckdb"
    run_corpus(plain, tmp_path / "plain.jsonl", 20, seed=4)
    run_corpus(both, tmp_path / "both.jsonl", 20, seed=4, instrumentations=(OpenAIInstrumentor(),))
    assert (tmp_path / "plain.jsonl").read_text() == (tmp_path / "both.jsonl").read_text()

    def verdicts(path: Path) -> dict[str | None, tuple[str, int | None]]:
        rules = RuleDiagnoser(norms=ToolNorms.from_store(path))
        return {d.task_id: (d.fault_type, d.step) for d in diagnose_episodes(rules, load(path))}

    a, b = verdicts(plain), verdicts(both)
    assert len(a) == 20 and a == b
    assert sum(t != "none_found" for t, _ in a.values()) >= 8


def test_diagnoses_are_the_same_with_message_content_captured_or_not(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """What a failure means is read at span time into content-free attributes, so capturing the
    messages (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) changes no diagnosis."""
    from agentchaos_otel import attributes as A
    from diagnosers.base import diagnose_episodes
    from diagnosers.rules import RuleDiagnoser

    def verdicts(path: Path) -> dict[str | None, tuple[str, int | None, str]]:
        # A named root cause is compared with its evidence. An answer of none_found is compared
        # without it: its evidence may mention what was weak on the way, a call slower than the
        # others included, and the two runs are timed by real clocks.
        rules = RuleDiagnoser(norms=ToolNorms.from_store(path))
        return {d.task_id: (d.fault_type, d.step, d.evidence if d.fault_type != "none_found" else "")
                for d in diagnose_episodes(rules, load(path))}

    monkeypatch.delenv(A.CAPTURE_CONTENT_ENV, raising=False)
    run_corpus(tmp_path / "off.duckdb", tmp_path / "off.jsonl", 20, seed=5)
    monkeypatch.setenv(A.CAPTURE_CONTENT_ENV, "true")
    run_corpus(tmp_path / "on.duckdb", tmp_path / "on.jsonl", 20, seed=5)
    assert (tmp_path / "off.jsonl").read_text() == (tmp_path / "on.jsonl").read_text()
    on = load(tmp_path / "on.duckdb")
    assert any(A.GEN_AI_OUTPUT_MESSAGES in s.attributes for ep in on for s in ep.steps)  # content was captured
    off, with_content = verdicts(tmp_path / "off.duckdb"), verdicts(tmp_path / "on.duckdb")
    assert len(off) == 20 and off == with_content
    assert sum(t != "none_found" for t, _, _ in off.values()) >= 5
