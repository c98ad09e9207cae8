"""Beside the user's GenAI instrumentation: the same agent, the same plans, the same truth.

For each instrumentation an agent may already run (installed from PyPI by the dev extra), the same
agent under the same plans must give the same ``llm_calls`` count, the same steps and the same
rule-based diagnoses (type and step) as without it, whichever was instrumented first; and our
ground truth must be visible on the span the user's tool shows. Agents: the reference agent (the
openai SDK) and a direct anthropic SDK agent, both on the simulated server (SIMULATED model).
The plans are the ones that stress the pairing: a content fault, a tool-call fault, an HTTP 429
the SDK retries (two attempts under one SDK-level span), a stream fault and a replayed response
(the "response seen before" signal must fire on it, and only on it).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import duckdb
import openai
import pytest
import wrapt
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.faults.catalog import get_fault
from agentchaos_otel.instrumentor import AgentChaosInstrumentor
from agentchaos_otel.plans.plan import Experiment, FaultRule, Plan, from_fault_names
from agentchaos_otel.sim.reference_agent import SYSTEM_PROMPT, ReferencePolicy, run_reference_agent
from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, TOOL_SPECS, ToolLogEntry, reference_tasks
from agentchaos_otel.sim.server import SimulatedModelServer
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read.episodes import load_episodes
from diagnosers.rules import RuleDiagnoser
from diagnosers.view import EpisodeView

pytestmark = pytest.mark.coexist

PLANS = ("llm_truncate_single", "tool_error_single", "http_429", "stream_truncate", "compound_stale_cache")
TASK = reference_tasks(1, seed=11, min_subtasks=3, max_subtasks=3)[0]
ANTHROPIC_TOOLS = [{"name": name, "description": spec["function"]["description"],
                    "input_schema": spec["function"]["parameters"]} for name, spec in TOOL_SPECS.items()]


def _plan(name: str) -> Plan:
    """The catalog entry; the 429's Retry-After shortened to 10 ms so the SDK's retry is quick."""
    if name != "http_429":
        return from_fault_names([name])
    spec = get_fault(name)
    spec = dataclasses.replace(spec, params={**spec.params, "retry_after": 0.01})
    return Plan(name=name, experiments=(Experiment(name, (FaultRule.from_spec(spec),)),))


@dataclasses.dataclass(frozen=True)
class Foreign:
    name: str
    agent: str  # "openai" | "anthropic"
    scope: str  # instrumentation scope of its LLM spans
    make: Callable[[], Any] | None  # its instrumentor; None: the anthropic SDK's own spans


def _oi_openai() -> Any:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _otel_openai_v2() -> Any:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _openllmetry_openai() -> Any:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _openllmetry_anthropic() -> Any:
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    return AnthropicInstrumentor()


FOREIGN = {
    "openinference-openai": Foreign("openinference-openai", "openai", "openinference.instrumentation.openai",
                                    _oi_openai),
    "openai-v2": Foreign("openai-v2", "openai", "opentelemetry.util.genai.handler", _otel_openai_v2),
    "openllmetry-openai": Foreign("openllmetry-openai", "openai", "opentelemetry.instrumentation.openai.v1",
                                  _openllmetry_openai),
    "openllmetry-anthropic": Foreign("openllmetry-anthropic", "anthropic", "opentelemetry.instrumentation.anthropic",
                                     _openllmetry_anthropic),
    "anthropic-native": Foreign("anthropic-native", "anthropic", "com.anthropic.sdk.python", None),
}


def _strip_leftover_wrappers() -> None:
    """Undo SDK patches an instrumentor's ``uninstrument`` left behind.

    opentelemetry-instrumentation-openai 0.62.4 unwraps ``Completions.create`` under a dotted
    path OTel's ``unwrap`` cannot resolve, so its wrapper (and its tracer) stays; a second
    ``instrument`` in the same process would then trace every call twice, once into the previous
    test's provider. Only this test process needs the clean-up: an application instruments once.
    """
    from openai.resources.chat.completions import completions

    for cls in (completions.Completions, completions.AsyncCompletions):
        while isinstance(vars(cls)["create"], wrapt.FunctionWrapper):
            cls.create = vars(cls)["create"].__wrapped__


def _anthropic_agent(client: anthropic.Anthropic, tools: dict[str, Any], *, stream: bool) -> bool:
    """A plain Messages tool loop: call, run the tool_use blocks, send the results, stop on text."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK.prompt}]
    log: list[ToolLogEntry] = []
    for _ in range(30):
        kwargs = {"model": "sim-reference", "max_tokens": 1024, "system": SYSTEM_PROMPT, "tools": ANTHROPIC_TOOLS,
                  "messages": messages}
        try:
            if stream:
                with client.messages.stream(**kwargs) as s:
                    message = s.get_final_message()
            else:
                message = client.messages.create(**kwargs)
        except anthropic.APIError:
            return False
        blocks = [b.model_dump(include={"type", "text", "id", "name", "input"}) for b in message.content
                  if b.type == "tool_use" or (b.type == "text" and b.text)]
        uses = [b for b in message.content if b.type == "tool_use"]
        if not uses:
            return TASK.check("".join(b.text for b in message.content if b.type == "text"), log)
        messages.append({"role": "assistant", "content": blocks})
        results = []
        for use in uses:
            try:
                text = json.dumps(tools[use.name](**use.input))
            except Exception as exc:  # a faulted call is still answered, as the reference agent does
                text = f"Error: {type(exc).__name__}: {exc}"
            log.append(ToolLogEntry(use.name, use.input, text, use.id, True))
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": text})
        messages.append({"role": "user", "content": results})
    return False


def _run_episodes(foreign: Foreign | None, theirs_first: bool, server: SimulatedModelServer, db: Path) -> None:
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    ours = AgentChaosInstrumentor()
    theirs = foreign.make() if foreign is not None and foreign.make is not None else None
    steps = [lambda: ours.instrument(tracer_provider=provider, plan=None)]
    if theirs is not None:
        steps.insert(0 if theirs_first else 1, lambda: theirs.instrument(tracer_provider=provider))
    for step in steps:
        step()
    try:
        for name in PLANS:
            stream = name.startswith("stream_")
            with episode(name, plan=_plan(name), seed=1, tracer_provider=provider) as ep:
                tools = ep.wrap_tools(REFERENCE_TOOLS)
                if foreign is not None and foreign.agent == "anthropic":
                    native = {"tracer_provider": provider} if foreign.make is None else False
                    with anthropic.Anthropic(base_url=server.root_url, api_key="sk-ant-test", max_retries=2,
                                             open_telemetry=native) as client:
                        ep.set_outcome(success=_anthropic_agent(client, tools, stream=stream))
                else:
                    with openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=2) as client:
                        ep.set_outcome(success=run_reference_agent(client, TASK, model="sim-reference",
                                                                   tools=tools, stream=stream).success)
    finally:
        if theirs is not None:
            theirs.uninstrument()
            _strip_leftover_wrappers()
        ours.uninstrument()
    DuckDBSpanExporter(str(db)).export(memory.get_finished_spans())
    provider.shutdown()


def _anthropic_baseline(server: SimulatedModelServer, db: Path) -> None:
    _run_episodes(Foreign("none", "anthropic", "", _NoInstrumentor), False, server, db)


class _NoInstrumentor:
    """Stands for "no other instrumentation" where the agent needs the anthropic client."""

    def instrument(self, **_: Any) -> None:
        return None

    def uninstrument(self) -> None:
        return None


def summary(db: Path) -> dict[str, Any]:
    """Per plan: llm_calls rows, steps (step, kind, name) and the rule-based diagnosis (type, step)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        calls = dict(con.execute("SELECT task_id, count(*) FROM llm_calls GROUP BY 1").fetchall())
        steps: dict[str, list[tuple[int, str, str]]] = {}
        rows = con.execute("SELECT task_id, step, kind, name FROM steps ORDER BY 1, 2").fetchall()
        for task, step, kind, name in rows:
            steps.setdefault(task, []).append((step, kind, name))
        faults = dict(con.execute("SELECT task_id, count(*) FROM injected_faults WHERE changed GROUP BY 1").fetchall())
    finally:
        con.close()
    diagnoser = RuleDiagnoser()
    episodes = load_episodes(db)
    diagnoses = {ep.task_id: (d.fault_type, d.step) for ep in episodes for d in [diagnoser.diagnose(ep)]}
    # the evidence a stale reply rests on (a response id seen before), whatever the outcome: an
    # episode the agent recovered has no root cause, and the replay must still be seen as one
    replays = {ep.task_id: [o.step for o in view.obs if view.response_seen_before(o)]
               for ep in episodes for view in [EpisodeView(ep)]}
    return {"llm_calls": calls, "steps": steps, "diagnoses": diagnoses, "faults": faults, "replays": replays}


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatedModelServer]:
    with SimulatedModelServer(ReferencePolicy(), seed=3) as srv:
        yield srv


@pytest.fixture(scope="module")
def baselines(server: SimulatedModelServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = {}
    for agent in ("openai", "anthropic"):
        db = tmp_path_factory.mktemp("baseline") / f"{agent}.duckdb"
        if agent == "openai":
            _run_episodes(None, False, server, db)
        else:
            _anthropic_baseline(server, db)
        out[agent] = summary(db)
    return out


def test_baselines_exercise_what_the_pairing_must_survive(baselines: dict[str, dict[str, Any]]) -> None:
    for agent, base in baselines.items():
        assert set(base["faults"]) == set(PLANS), f"{agent}: every plan fired and changed something"
        retried = base["steps"]["http_429"]
        assert retried[0][1] == "llm" and retried[1][1] == "llm", f"{agent}: the 429 and its SDK retry"
        assert base["replays"]["compound_stale_cache"], f"{agent}: the stale cache replays a response"
        assert not any(steps for task, steps in base["replays"].items() if task != "compound_stale_cache")
        assert all(d[0] != "stale" for task, d in base["diagnoses"].items() if task != "compound_stale_cache")


CASES = [(name, first) for name, f in FOREIGN.items() for first in ((True, False) if f.make else (False,))]


@pytest.mark.parametrize(("name", "theirs_first"), CASES)
def test_same_calls_steps_and_diagnoses_beside(name: str, theirs_first: bool, server: SimulatedModelServer,
                                              baselines: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    foreign = FOREIGN[name]
    db = tmp_path / "coexist.duckdb"
    _run_episodes(foreign, theirs_first, server, db)
    con = duckdb.connect(str(db), read_only=True)
    theirs = con.execute(f"SELECT attributes FROM spans WHERE scope_name = '{foreign.scope}'").fetchall()
    con.close()
    assert theirs, f"{name} recorded no span: the comparison would prove nothing"
    mirrored = [json.loads(a) for (a,) in theirs]
    assert any(a.get(A.FAULT_INJECTED) is True for a in mirrored), "ground truth shows on their span"
    assert all(a.get(A.STEP_WRAPPED_ATTEMPTS, 0) >= 1 for a in mirrored), "each of their calls is paired"
    assert summary(db) == baselines[foreign.agent]
