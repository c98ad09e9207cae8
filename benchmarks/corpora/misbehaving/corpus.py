"""Build the misbehaving-provider corpus: episodes in a DuckDB trace store plus a label file.

``python -m benchmarks.corpora.misbehaving.corpus --db mb.duckdb --labels mb.jsonl --episodes 300 --seed 1``

Tracing is the project's own (``AgentChaosInstrumentor`` with ``plan=None``: nothing is
injected); failures come from the server and the tools. Each label line is
``{"task_id", "fault_type", "target", "step", "form", "family"}`` for an episode where a failure
form fired, ``{"task_id", "fault_type": "none"}`` for a clean one. ``step`` counts the episode's
LLM requests and tool calls from 0 in the order they happened. SIMULATED.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.tools import ToolFaultInjector
from agentchaos_otel.instrumentor import AgentChaosInstrumentor
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from benchmarks.corpora.misbehaving import agent
from benchmarks.corpora.misbehaving.forms import LLM_FORMS, TOOL_FORMS, Form, cut_json, tool_failure
from benchmarks.corpora.misbehaving.forms_heldout import HELDOUT_LLM_FORMS, HELDOUT_TOOL_FORMS, heldout_tool_failure
from benchmarks.corpora.misbehaving.server import EpisodePlan, MisbehavingServer, StepClock
from benchmarks.corpora.misbehaving.world import TOOL_SCHEMAS, TOOLS, Task, make_question

CLIENT_TIMEOUT_S = 1.0  # generous, so a loaded machine never times out a healthy call
FORMS: dict[str, Form] = {f.name: f for f in LLM_FORMS + TOOL_FORMS + HELDOUT_LLM_FORMS + HELDOUT_TOOL_FORMS}
HELDOUT_NAMES = frozenset(f.name for f in HELDOUT_LLM_FORMS + HELDOUT_TOOL_FORMS)


@dataclass
class EpisodeSpec:
    task: Task
    form: Form | None
    at: int  # LLM call index (LLM forms) or tool call index (tool forms)
    stream: bool


@dataclass
class ToolPlan:
    clock: StepClock
    form: str | None
    at_call: int
    calls: int = 0
    fired_step: int | None = None


def _tools(plan: ToolPlan) -> dict[str, Callable[..., Any]]:
    def make(name: str) -> Callable[..., Any]:
        def tool(**kwargs: Any) -> Any:
            step = plan.clock.tick()
            call = plan.calls
            plan.calls += 1
            if plan.form is not None and call == plan.at_call:
                plan.fired_step = step
                if plan.form == "body_cut_json":
                    return cut_json(TOOLS[name](**kwargs), 0.45)
                if plan.form in HELDOUT_NAMES:
                    return heldout_tool_failure(plan.form, name, TOOLS[name](**kwargs))
                return tool_failure(plan.form, name)
            return TOOLS[name](**kwargs)
        tool.__name__ = name
        return tool
    return {n: make(n) for n in TOOLS}


_CONTENT_FINAL = {"finish_length", "usage_at_max_tokens", "sparse_replacement_chars", "cp1252_mojibake",
                  "content_empty_stop", "json_in_fence", "json_in_prose", "finish_null_at_max_tokens",
                  "json_mode_answered_in_prose", "control_chars_in_digits"}
_TOOL_TURN = {"tool_args_cut", "tool_args_cut_stop", "stream_stops_after_tool_delta"}


def plan_episodes(n: int, seed: int, *, clean_share: float = 0.3, heldout_forms: bool = False
                  ) -> list[EpisodeSpec]:
    """Seeded episode specs: tasks of 2-4 questions, one failure form (or none) at a chosen call.
    ``heldout_forms`` draws from ``forms_heldout`` (never used while writing the rules) instead."""
    rng = random.Random(seed)
    specs = []
    forms = list(HELDOUT_LLM_FORMS + HELDOUT_TOOL_FORMS if heldout_forms else LLM_FORMS + TOOL_FORMS)
    for i in range(n):
        form = None if rng.random() < clean_share else rng.choice(forms)
        json_mode = bool(form and form.needs_json) or (form is None and rng.random() < 0.2)
        k = rng.randint(2, 4)
        task = Task(f"mb-{seed}-{i:04d}", tuple(make_question(rng) for _ in range(k)), json_mode)
        stream = bool(form and form.needs_stream) or (form is None and rng.random() < 0.2)
        if form is None:
            at = -1
        elif form.target == "tool_result":
            at = rng.randrange(k)
        elif form.name in _CONTENT_FINAL:
            at = k
        elif form.name in _TOOL_TURN:
            at = rng.randrange(k)
        else:
            at = rng.randrange(k + 1)
        specs.append(EpisodeSpec(task, form, at, stream))
    return specs


def run_corpus(db: str | Path, labels: str | Path, n: int, seed: int, *, clean_share: float = 0.3,
               instrumentations: tuple[Any, ...] = (), heldout_forms: bool = False) -> dict[str, int]:
    """Run ``n`` episodes against the misbehaving server; write spans to ``db`` and labels to ``labels``.

    ``instrumentations``: other OTel instrumentors to install beside ours (each gets
    ``instrument(tracer_provider=...)``), for the coexistence comparison.
    """
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    ours = AgentChaosInstrumentor()
    ours.instrument(tracer_provider=provider, plan=None)
    for inst in instrumentations:
        inst.instrument(tracer_provider=provider)
    counts = {"episodes": 0, "faulted": 0, "failed": 0, "clean_failed": 0}
    lines: list[dict[str, Any]] = []
    try:
        with MisbehavingServer() as server:
            for spec in plan_episodes(n, seed, clean_share=clean_share, heldout_forms=heldout_forms):
                lines.append(_one(server, provider, spec, counts))
    finally:
        for inst in instrumentations:
            inst.uninstrument()
        ours.uninstrument()
    DuckDBSpanExporter(str(db)).export(memory.get_finished_spans())
    provider.shutdown()
    Path(labels).write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return counts


def _one(server: MisbehavingServer, provider: TracerProvider, spec: EpisodeSpec, counts: dict[str, int]
         ) -> dict[str, Any]:
    clock = StepClock()
    form = spec.form
    llm_form = form.name if form is not None and form.target != "tool_result" else None
    tool_form = form.name if form is not None and form.target == "tool_result" else None
    eplan = EpisodePlan(clock, llm_form, spec.at if llm_form else -1)
    tplan = ToolPlan(clock, tool_form, spec.at if tool_form else -1)
    key = spec.task.task_id
    server.plans[key] = eplan
    answer: str | None = None
    with episode(key, plan=None, seed=0, tracer_provider=provider) as ep:  # noqa: SIM117
        trace.get_current_span().set_attribute(A.SIMULATED, True)  # readers caption it SIMULATED
        tools = ToolFaultInjector("none", tracer_provider=provider).wrap(_tools(tplan))
        with openai.OpenAI(base_url=server.base_url, api_key="sk-mb-test", max_retries=0,
                           timeout=CLIENT_TIMEOUT_S, default_headers={"x-episode": key}) as client:
            try:
                answer = agent.run(client, "gpt-4o-mini", spec.task.prompt(), tools, TOOL_SCHEMAS,
                                   json_mode=spec.task.json_mode, stream=spec.stream)
            except Exception:  # noqa: BLE001 - an agent that crashed has failed its task
                answer = None
        ok = spec.task.check(answer)
        ep.set_outcome(success=ok)
    del server.plans[key]
    counts["episodes"] += 1
    counts["failed"] += not ok
    fired = eplan.fired_step if llm_form else tplan.fired_step
    if form is None or fired is None:
        counts["clean_failed"] += not ok
        return {"task_id": key, "fault_type": "none"}
    counts["faulted"] += 1
    return {"task_id": key, "fault_type": form.fault_type, "target": form.target, "step": fired,
            "form": form.name, "family": form.family}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True)
    p.add_argument("--labels", required=True)
    p.add_argument("--episodes", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--clean-share", type=float, default=0.3)
    p.add_argument("--heldout-forms", action="store_true", help="only the forms kept out of rule development")
    a = p.parse_args(argv)
    counts = run_corpus(a.db, a.labels, a.episodes, a.seed, clean_share=a.clean_share,
                        heldout_forms=a.heldout_forms)
    print(json.dumps(counts), "(SIMULATED)")


if __name__ == "__main__":
    main()
