"""summarize(): counts, fault tallies and success rates over a hand-built store."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.trace import SpanKind

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import StoreError
from agentchaos_otel.store.read.summary import render_summary, summarize
from tests.agentchaos_otel.store.test_support_builders import Step, emit_episode, provider


def fault(kind: str, changed: bool = True) -> dict[str, object]:
    return {A.FAULT_INJECTED: True, A.FAULT_TYPE: kind, A.FAULT_TARGET: "tool_result",
            A.FAULT_CHANGED: changed}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "sum.duckdb"
    with provider(path) as (tracer, _, _):
        emit_episode(tracer, "a", [Step("llm"), Step("tool")], condition="none", success=True)
        emit_episode(tracer, "b", [Step("llm"), Step("tool", fault("timeout"))], condition="bursty",
                     success=False)
        emit_episode(tracer, "c", [Step("llm"), Step("tool", fault("timeout")),
                                   Step("tool", fault("empty", False))],
                     condition="bursty", success=True, simulated=True)
        emit_episode(tracer, "d", [Step("llm")], condition="bursty", success=None)
        with tracer.start_as_current_span("chat x", kind=SpanKind.CLIENT,
                                          attributes={A.GEN_AI_OPERATION_NAME: "chat"}):
            pass
    return path


def test_counts_and_rates(db: Path) -> None:
    s = summarize(db)
    assert s["spans"] == 3 + 3 + 4 + 2 + 1
    assert (s["traces"], s["episodes"], s["episodes_without_root"]) == (5, 5, 1)
    assert (s["steps"], s["llm_calls"], s["tool_calls"]) == (9, 5, 4)
    assert (s["faults_injected"], s["faults_changed"], s["episodes_triggered"]) == (3, 2, 2)
    assert s["faults_by_type"] == {"empty": {"injected": 1, "changed": 0},
                                   "timeout": {"injected": 2, "changed": 2}}
    assert (s["success_known"], s["success_count"]) == (3, 2)
    assert s["success_rate"] == pytest.approx(2 / 3)
    bursty = s["success_by_condition"]["bursty"]
    assert (bursty["episodes"], bursty["known"], bursty["succeeded"], bursty["triggered"]) == (3, 2, 1, 2)
    assert bursty["rate"] == pytest.approx(0.5)
    assert s["success_by_condition"]["(none)"]["rate"] is None  # the rootless trace
    assert s["simulated"] is True and s["simulated_episodes"] == 1


def test_render_labels_simulated(db: Path) -> None:
    text = render_summary(summarize(db))
    assert "SIMULATED MODEL: 1 episode(s)" in text
    assert "success 2/3 (66.7%)" in text
    assert "timeout" in text and "bursty" in text


def test_missing_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such file"):
        summarize(tmp_path / "none.duckdb")
