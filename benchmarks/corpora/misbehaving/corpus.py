"""Build the misbehaving-provider corpus: episodes in a DuckDB trace store plus a label file.

``python -m benchmarks.corpora.misbehaving.corpus --db mb.duckdb --labels mb.jsonl --episodes 300 --seed 1``

Tracing is the project's own (``AgentChaosInstrumentor`` with ``plan=None``: nothing is
injected); failures come from the server and the tools. An episode may hold a failure form, a
second one later, a slip of the scripted model (its own mistake), an agent policy that retries a
failed lookup (and may skip it after a second failure), SDK retries, and 15 to 25 questions
instead of 2 to 4 (long traces, root cause early, failure late). Labels follow docs/taxonomy.md,
one line per episode: ``{"task_id", "fault_type", "target", "step", "form", "family",
"category"}``; the root cause is the first form the agent did not absorb (a retried lookup that
then answered, an SDK retry), ``none`` when there is none, and ``category`` says which of
faulted_failure / clean_success / benign_success / unfaulted_failure the episode is. ``step``
counts the episode's LLM requests and tool calls from 0 in the order they happened. SIMULATED.
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
from benchmarks.corpora.misbehaving.forms import (
    LLM_FORMS,
    TOOL_FORMS,
    Form,
    cut_json,
    partial_result,
    tool_failure,
)
from benchmarks.corpora.misbehaving.forms_heldout import HELDOUT_LLM_FORMS, HELDOUT_TOOL_FORMS, heldout_tool_failure
from benchmarks.corpora.misbehaving.server import (
    FINAL_SLIPS,
    JSON_SLIPS,
    SLIPS,
    EpisodePlan,
    MisbehavingServer,
    StepClock,
)
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
    second: Form | None = None  # a later LLM form (two-fault episodes)
    second_at: int = -1
    slip: str | None = None
    slip_at: int = -1
    policy: tuple[str, ...] = ()
    sdk_retries: int = 0


@dataclass
class ToolPlan:
    clock: StepClock
    form: str | None
    at_call: int
    calls: int = 0
    fired_step: int | None = None
    fired_args: str | None = None
    absorbed: bool = False  # the same call, made again right after, answered normally


def _tools(plan: ToolPlan) -> dict[str, Callable[..., Any]]:
    def make(name: str) -> Callable[..., Any]:
        def tool(**kwargs: Any) -> Any:
            step = plan.clock.tick()
            call = plan.calls
            plan.calls += 1
            sent = json.dumps([name, kwargs], sort_keys=True, default=str)
            if plan.form is not None and call == plan.at_call:
                plan.fired_step = step
                plan.fired_args = sent
                if plan.form == "body_cut_json":
                    return cut_json(TOOLS[name](**kwargs), 0.45)
                if plan.form == "search_timed_out_partial":
                    return partial_result(TOOLS[name](**kwargs))
                if plan.form in HELDOUT_NAMES:
                    return heldout_tool_failure(plan.form, name, TOOLS[name](**kwargs))
                return tool_failure(plan.form, name)
            result = TOOLS[name](**kwargs)
            if plan.fired_args is not None and call == plan.at_call + 1 and sent == plan.fired_args:
                plan.absorbed = True
            return result
        tool.__name__ = name
        return tool
    return {n: make(n) for n in TOOLS}


_CONTENT_FINAL = {"finish_length", "usage_at_max_tokens", "sparse_replacement_chars", "cp1252_mojibake",
                  "content_empty_stop", "finish_null_at_max_tokens", "control_chars_in_digits"}
# HTTP failures the openai SDK retries by itself (408, 409, 429, 5xx; connection errors, timeouts).
_SDK_RETRIED = {"openai_500", "openai_503_overloaded", "anthropic_529_overloaded", "gateway_502_html",
                "gateway_504_html", "alb_503_html", "openai_429_rpm", "cloudflare_520_html",
                "gateway_429_no_retry_after", "connection_reset"}
_TOOL_TURN = {"tool_args_cut", "tool_args_cut_stop", "stream_stops_after_tool_delta"}


def plan_episodes(n: int, seed: int, *, clean_share: float = 0.3, heldout_forms: bool = False
                  ) -> list[EpisodeSpec]:
    """Seeded episode specs: tasks of 2-4 questions (15-25 for one in five), a failure form (or
    none) at a chosen call, and in some episodes a second form later, a slip of the model, an
    agent that retries failed lookups, SDK retries. ``heldout_forms`` draws from
    ``forms_heldout`` (never used while writing the rules) instead."""
    rng = random.Random(seed)
    specs = []
    forms = list(HELDOUT_LLM_FORMS + HELDOUT_TOOL_FORMS if heldout_forms else LLM_FORMS + TOOL_FORMS)
    llm_forms = [f for f in forms if f.target != "tool_result" and not f.needs_stream and not f.needs_json
                 and f.name not in _CONTENT_FINAL]
    for i in range(n):
        form = None if rng.random() < clean_share else rng.choice(forms)
        slip = rng.choice(SLIPS) if rng.random() < 0.15 else None
        json_mode = bool(form and form.needs_json) or (form is None and rng.random() < 0.2) or (
            slip in JSON_SLIPS)
        if slip in JSON_SLIPS and not json_mode:
            slip = None
        k = rng.randint(15, 25) if rng.random() < 0.2 else rng.randint(2, 4)
        task = Task(f"mb-{seed}-{i:04d}", tuple(make_question(rng) for _ in range(k)), json_mode)
        stream = bool(form and form.needs_stream) or (form is None and rng.random() < 0.2)
        if form is None:
            at = -1
        elif form.target == "tool_result":
            at = rng.randrange(min(k, 3))  # early: failure late, root cause early
        elif form.name in _CONTENT_FINAL:
            at = k
        elif form.name in _TOOL_TURN:
            at = rng.randrange(min(k, 3))
        else:
            at = rng.randrange(min(k + 1, 3))
        policy: tuple[str, ...] = ()
        r = rng.random()
        if r < 0.25:
            policy = (agent.RETRY_ONCE,)
        elif r < 0.4:
            policy = (agent.RETRY_ONCE, agent.SKIP_AFTER_RETRY)
        second, second_at = None, -1
        if form is not None and form.target == "tool_result" and rng.random() < 0.3 and not stream:
            second = rng.choice(llm_forms)
            second_at = rng.randrange(at + 1, k + 1) if at + 1 <= k else k
        slip_at = rng.randrange(k) if slip is not None and slip not in FINAL_SLIPS else -1
        sdk = 2 if (form is not None and form.name in _SDK_RETRIED and rng.random() < 0.4) else 0
        specs.append(EpisodeSpec(task, form, at, stream, second, second_at, slip, slip_at, policy, sdk))
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
    counts = {"episodes": 0, "faulted": 0, "failed": 0, "clean_failed": 0, "succeeded": 0}
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
    form, second = spec.form, spec.second
    llm_form = form.name if form is not None and form.target != "tool_result" else (
        second.name if second is not None else None)
    llm_at = spec.at if form is not None and form.target != "tool_result" else spec.second_at
    tool_form = form.name if form is not None and form.target == "tool_result" else None
    eplan = EpisodePlan(clock, llm_form, llm_at if llm_form else -1, spec.slip, spec.slip_at)
    tplan = ToolPlan(clock, tool_form, spec.at if tool_form else -1)
    key = spec.task.task_id
    server.plans[key] = eplan
    answer: str | None = None
    with episode(key, plan=None, seed=0, tracer_provider=provider) as ep:  # noqa: SIM117
        trace.get_current_span().set_attribute(A.SIMULATED, True)  # readers caption it SIMULATED
        tools = ToolFaultInjector("none", tracer_provider=provider).wrap(_tools(tplan))
        with openai.OpenAI(base_url=server.base_url, api_key="sk-mb-test", max_retries=spec.sdk_retries,
                           timeout=CLIENT_TIMEOUT_S, default_headers={"x-episode": key}) as client:
            try:
                answer = agent.run(client, "gpt-4o-mini", spec.task.prompt(), tools, TOOL_SCHEMAS,
                                   json_mode=spec.task.json_mode, stream=spec.stream, policy=spec.policy,
                                   max_tokens=256 if len(spec.task.questions) <= 4 else 2048)
            except Exception:  # noqa: BLE001 - an agent that crashed has failed its task
                answer = None
        ok = spec.task.check(answer)
        ep.set_outcome(success=ok)
    del server.plans[key]
    counts["episodes"] += 1
    counts["failed"] += not ok
    # What fired, in step order, and whether the agent absorbed it (a retry that then answered).
    fired: list[tuple[int, Form, bool]] = []
    if tool_form is not None and tplan.fired_step is not None and form is not None:
        fired.append((tplan.fired_step, form, tplan.absorbed))
    llm = FORMS.get(llm_form) if llm_form else None
    if llm is not None and eplan.fired_step is not None:
        fired.append((eplan.fired_step, llm, eplan.retried))
    fired.sort(key=lambda x: x[0])
    roots = [(step, f) for step, f, absorbed in fired if not absorbed]
    row: dict[str, Any] = {"task_id": key, "fault_type": "none"}
    if spec.slip is not None and eplan.slipped:
        row["slip"] = spec.slip
    if ok:
        row["category"] = "benign_success" if fired else "clean_success"
        counts["succeeded"] += 1
        return row
    if not roots:
        counts["clean_failed"] += 1
        row["category"] = "unfaulted_failure"
        return row
    step, root = roots[0]
    counts["faulted"] += 1
    return {"task_id": key, "fault_type": root.fault_type, "target": root.target, "step": step,
            "form": root.name, "family": root.family, "category": "faulted_failure",
            **({"slip": spec.slip} if "slip" in row else {})}


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
