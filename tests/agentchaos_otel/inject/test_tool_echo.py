"""Tool spans record when a result echoes back an identifier different from the one asked for."""

from __future__ import annotations

from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.tools import ToolFaultInjector


def get_order(order_id: str) -> dict[str, Any]:
    return {"order_id": order_id, "total": 120.5, "placed": "2024-03-15", "items": ["a", "b"]}


def test_echo_mismatch_marks_a_neighbouring_entity(memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    with episode("echo", tracer_provider=provider):
        clean = ToolFaultInjector("none", seed=1, tracer_provider=provider).wrap(get_order)
        faulty = ToolFaultInjector("independent", seed=1, kinds=("wrong_value",), rate=1.0,
                                   tracer_provider=provider).wrap(get_order)
        assert clean(order_id="ORD-0042")["order_id"] == "ORD-0042"
        shown = faulty(order_id="ORD-0042")
    assert shown["order_id"] != "ORD-0042"
    first, second = sorted((s for s in exporter.get_finished_spans() if s.name == "execute_tool get_order"),
                           key=lambda s: s.attributes[A.STEP])
    assert list(first.attributes[A.TOOL_RESULT_ECHO_MISMATCH]) == []
    assert list(second.attributes[A.TOOL_RESULT_ECHO_MISMATCH]) == ["order_id"]
    assert second.attributes[A.FAULT_TYPE] == "wrong_value"
