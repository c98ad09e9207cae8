"""load_episodes / load_ground_truth, on hand-built traces and on the real core stack."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import httpx2
import openai
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.tools import ToolFaultInjector
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.plans.plan import from_fault_names
from agentchaos_otel.records import EpisodeTrace, FaultLabel
from agentchaos_otel.sim.server import SimulatedModelServer
from agentchaos_otel.store.database.connect import StoreError, open_store
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read import episodes as E
from agentchaos_otel.store.read.chunks import chunked_store
from agentchaos_otel.store.read.episodes import load_episodes, load_ground_truth
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from tests.agentchaos_otel.store.test_support_builders import Step, emit_episode, provider

FAULTY_TOOL = {A.FAULT_INJECTED: True, A.FAULT_TYPE: "timeout", A.FAULT_TARGET: "tool_result",
               A.FAULT_CHANGED: True, A.ORIGINAL_DIGEST: "abc", A.TOOL_RESULT_IS_ERROR: True}
NOOP_LLM = {A.FAULT_INJECTED: True, A.FAULT_TYPE: "empty", A.FAULT_TARGET: "content", A.FAULT_CHANGED: False,
            A.RESPONSE_CONTENT_LENGTH: 12}

TOOL_EVENTS = [(A.EVENT_FAULT_APPLIED, {A.FAULT_TYPE: "x"}), ("tool.note", {"ok": 1})]


def lookup(q: int) -> dict[str, object]:
    return {"answer": q * 2, "items": [1, 2, 3, 4], "when": "2026-01-02"}


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    db = tmp_path / "eps.duckdb"
    with provider(db) as (tracer, _, _):
        ids = {
            "a": emit_episode(tracer, "a", [Step("llm"), Step("tool", FAULTY_TOOL, events=TOOL_EVENTS),
                                            Step("llm", NOOP_LLM)],
                              condition="independent", seed=5, success=False),
            "b": emit_episode(tracer, "b", [Step("llm")], condition="none", seed=5, success=True),
        }
        with tracer.start_as_current_span("foreign chat", kind=SpanKind.CLIENT,
                                          attributes={A.GEN_AI_OPERATION_NAME: "chat"}) as sp:
            ids["foreign"] = format(sp.get_span_context().trace_id, "032x")
    return db, ids


def test_unblinded_episodes(store: tuple[Path, dict[str, str]]) -> None:
    db, ids = store
    eps = {e.trace_id: e for e in load_episodes(db, blind=False)}
    assert set(eps) == set(ids.values())
    a = eps[ids["a"]]
    assert (a.task_id, a.condition, a.seed, a.success) == ("a", "independent", 5, False)
    assert [(s.step, s.kind) for s in a.steps] == [(0, "llm"), (1, "tool"), (2, "llm")]
    tool = a.steps[1]
    assert tool.get(A.FAULT_TYPE) == "timeout" and tool.get(A.TOOL_RESULT_IS_ERROR) is True
    assert [e["name"] for e in tool.events] == [A.EVENT_FAULT_APPLIED, "tool.note"]
    assert a.faults() == [FaultLabel(1, tool.span_id, "timeout", "tool_result", None)]
    assert a.attributes[A.GEN_AI_AGENT_NAME] == "ref"
    foreign = eps[ids["foreign"]]
    assert foreign.task_id is None and foreign.success is None and len(foreign.steps) == 1


def test_blind_by_default(store: tuple[Path, dict[str, str]]) -> None:
    db, ids = store
    (a,) = load_episodes(db, trace_ids=[ids["a"]])
    for s in a.steps:
        assert not any(A.is_ground_truth(k) for k in s.attributes)
        assert not any(str(e["name"]).startswith(A.FAULT_PREFIX) for e in s.events)
    assert a.steps[1].get(A.TOOL_RESULT_IS_ERROR) is True  # observable signals stay
    assert a.steps[2].get(A.RESPONSE_CONTENT_LENGTH) == 12
    assert a.faults() == [] and not a.triggered


def test_filters(store: tuple[Path, dict[str, str]]) -> None:
    db, ids = store
    assert [e.task_id for e in load_episodes(db, where="condition = 'none'")] == ["b"]
    assert [e.task_id for e in load_episodes(db, where="NOT success")] == ["a"]
    assert [e.trace_id for e in load_episodes(db, trace_ids=[ids["b"], "0" * 32])] == [ids["b"]]
    assert load_episodes(db, trace_ids=[]) == []
    with pytest.raises(StoreError, match="cannot load episodes"):
        load_episodes(db, where="no_such_column = 1")


def test_ground_truth_only_changed(store: tuple[Path, dict[str, str]]) -> None:
    db, ids = store
    gt = load_ground_truth(db)
    assert set(gt) == {ids["a"]}
    ((label,),) = gt.values()
    assert (label.step, label.fault_type, label.target) == (1, "timeout", "tool_result")


# Ground truth, an observable signal, a key only some steps carry, one no step carries.
PROJECTED = {A.FAULT_TYPE, A.FAULT_CHANGED, A.ORIGINAL_DIGEST, A.TOOL_RESULT_IS_ERROR, "no.such.key"}


def _without_steps(eps: list[EpisodeTrace]) -> list[EpisodeTrace]:
    return [dataclasses.replace(e, steps=()) for e in eps]


def test_projected_steps_carry_only_the_asked_keys_and_no_events(store: tuple[Path, dict[str, str]]) -> None:
    db, ids = store
    full = load_episodes(db, blind=False)
    projected = load_episodes(db, blind=False, step_keys=PROJECTED)
    assert _without_steps(projected) == _without_steps(full)  # roots, with their attributes, whole
    assert any(s.events for e in full for s in e.steps)
    for f, p in zip(full, projected, strict=True):
        for fs, ps in zip(f.steps, p.steps, strict=True):
            assert ps.attributes == {k: v for k, v in fs.attributes.items() if k in PROJECTED}
            assert ps.events == []
            assert dataclasses.replace(ps, attributes={}, events=[]) == dataclasses.replace(fs, attributes={},
                                                                                            events=[])
    a = next(e for e in projected if e.trace_id == ids["a"])
    llm, tool, noop = a.steps
    assert A.FAULT_CHANGED not in llm.attributes and llm.get(A.FAULT_CHANGED, True) is True  # absent, not None
    assert tool.get(A.FAULT_CHANGED) is True and noop.get(A.FAULT_CHANGED) is False
    assert tool.get(A.ORIGINAL_DIGEST) == "abc" and tool.get(A.TOOL_RESULT_IS_ERROR) is True
    assert all("no.such.key" not in s.attributes for e in projected for s in e.steps)
    assert [s.attributes for e in load_episodes(db, blind=False, step_keys=()) for s in e.steps] == [
        {} for e in full for s in e.steps]


def test_projected_steps_are_blinded_too(store: tuple[Path, dict[str, str]]) -> None:
    db, ids = store
    blind = load_episodes(db, step_keys=PROJECTED)
    assert blind == [e.blind() for e in load_episodes(db, blind=False, step_keys=PROJECTED)]
    assert _without_steps(blind) == _without_steps(load_episodes(db))
    assert not any(A.is_ground_truth(k) for e in blind for s in e.steps for k in s.attributes)
    (a,) = [e for e in blind if e.trace_id == ids["a"]]
    assert [s.attributes for s in a.steps] == [{}, {A.TOOL_RESULT_IS_ERROR: True}, {}]
    assert a.faults() == []


def test_projected_steps_share_their_repeated_strings(store: tuple[Path, dict[str, str]]) -> None:
    db, _ = store
    steps = [s for e in load_episodes(db, blind=False, step_keys=PROJECTED) for s in e.steps]
    full = [s for e in load_episodes(db, blind=False) for s in e.steps]
    for field in ("kind", "status_code"):
        values = [getattr(s, field) for s in steps]
        assert len({id(v) for v in values}) == len(set(values)) < len(values)  # one object per value
    keys = [k for s in steps for k in s.attributes if k == A.FAULT_TYPE]
    assert len(keys) > 1 and len({id(k) for k in keys}) == 1
    assert len({id(k) for s in full for k in s.attributes if k == A.FAULT_TYPE}) > 1  # the full load does not


def test_projection_through_the_careful_path_and_unquotable_keys(store: tuple[Path, dict[str, str]]) -> None:
    db, _ = store
    with chunked_store(db) as chunks:
        chunks.plan()
        (number,) = chunks.chunks()
        rows = E._step_tuples(chunks.load_chunk(number), None, sql=E._step_sql(PROJECTED))
    odd = [(r[0], str(r[1]), *r[2:]) for r in rows]  # a step number as text: not the fast path's types
    for blind in (False, True):
        fast = E._step_records(rows, blind, projected=True)
        assert E._step_records(odd, blind, projected=True) == fast
        expected = load_episodes(db, blind=blind, step_keys=PROJECTED)
        assert {t: tuple(steps) for t, steps in fast.items()} == {e.trace_id: e.steps for e in expected if e.steps}
    for bad in ('say "hi"', "it's"):
        with pytest.raises(ValueError, match="JSON path"):
            load_episodes(db, step_keys={A.FAULT_TYPE, bad})


def test_core_stack_round_trip(tmp_path: Path, mode_server: SimulatedModelServer) -> None:
    """Episodes recorded by the real injector, openai SDK and tool injector load back with their faults."""
    db = tmp_path / "core.duckdb"
    tp = TracerProvider()
    tp.add_span_processor(EpisodeSpanProcessor())
    tp.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(db)))
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=tp)
    plan = from_fault_names(["llm_error_single"])
    logs = {}
    with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-never-stored-4711",
                       http_client=httpx2.Client(transport=transport), max_retries=0) as client:
        for task in ("t1", "t2"):
            with episode(task, plan=plan, seed=1, tracer_provider=tp, agent_name="ref", simulated=True) as ep:
                tools = ToolFaultInjector("independent", seed=1, episode_key=task, rate=1.0,
                                          tracer_provider=tp)
                tools.wrap({"lookup": lookup})
                for i in range(3):
                    client.chat.completions.create(model="sim-core-test",
                                                   messages=[{"role": "user", "content": f"plain {i}"}])
                    tools.call_tool("lookup", {"q": i})
                ep.set_outcome(success=task == "t1")
                logs[task] = sorted((r.step, r.fault_type) for r in ep.fault_log if r.changed)
    tp.shutdown()

    eps = {e.task_id: e for e in load_episodes(db, blind=False)}
    assert set(eps) == {"t1", "t2"}
    assert eps["t1"].success is True and eps["t2"].success is False
    gt = load_ground_truth(db)
    for task, e in eps.items():
        assert [s.kind for s in e.steps] == ["llm", "tool"] * 3
        assert [(f.step, f.fault_type) for f in e.faults()] == logs[task]
        assert any(k == "error" for _, k in logs[task]) and len(logs[task]) >= 2  # LLM and tool faults
        assert [(f.step, f.fault_type) for f in gt[e.trace_id]] == logs[task]
    with open_store(db) as conn:
        n_sim, n_eps = conn.execute(
            "SELECT count(*) FILTER (WHERE simulated), count(*) FROM episodes").fetchone()
        models = conn.execute("SELECT DISTINCT request_model FROM llm_calls").fetchall()
        dump = conn.execute("SELECT string_agg(attributes::VARCHAR || resource::VARCHAR || events::VARCHAR,"
                            " '') FROM spans").fetchone()[0]
    assert (n_sim, n_eps) == (2, 2)
    assert models == [("sim-core-test",)]
    assert "sk-never-stored-4711" not in dump


def test_blinding_finds_ground_truth_under_any_key_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentchaos_otel import records as model

    monkeypatch.setattr(model, "_KEYS_REMEMBERED", 8)  # names forgotten every few steps
    for i in range(40):
        attrs = {f"k{i}": 1, f"{A.FAULT_PREFIX}x{i % 3}": True, f"{A.ORIGINAL_PREFIX}y{i}": "v",
                 "agentchaos.faultless": 2, A.TOOL_RESULT_IS_ERROR: False}
        step = model.StepRecord(i, f"s{i}", "tool", "t", 0, 1, attributes=dict(attrs))
        assert step.blind().attributes == {f"k{i}": 1, "agentchaos.faultless": 2, A.TOOL_RESULT_IS_ERROR: False}
        assert model.drop_ground_truth(dict(attrs)) == step.blind().attributes
    assert model.ground_truth_keys({1: "not a name"}) is None
