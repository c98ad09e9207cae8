"""One episode as a LangGraph user runs it: ``create_react_agent`` over ``ChatOpenAI``, traced.

The agent is built the way LangGraph's documentation shows, on ``langchain_openai.ChatOpenAI``
pointed at the loopback provider (SDK retries and timeout set, streaming on some episodes), with
the tools run by ``ToolNode``'s default error handling. Tracing is ``agentchaos_otel.configure``
plus ``episode(...)``, with OpenInference's LangChain instrumentor writing the tool spans.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

import agentchaos_otel
from benchmarks.blind.round9.forms import Form
from benchmarks.blind.round9.model import Persona
from benchmarks.blind.round9.providers import BY_NAME
from benchmarks.blind.round9.server import Session, Sim
from benchmarks.blind.round9.tools import Run, StepCounter, make_tools
from benchmarks.blind.round9.world import build_world, grade, task_text

SYSTEM = ("You are the front-desk assistant of a multi-specialty clinic. Use the tools to look patients up on "
          "the FHIR server, check coverage, book, charge copays, file prior authorizations and referrals, and "
          "message patients. Never guess identifiers. Summarise what you did at the end.")


@dataclass
class Spec:
    """One planned episode."""

    task_id: str
    seed: int
    kinds: list[str]
    provider: str
    stream: bool
    max_retries: int
    timeout: float
    persona: Persona
    llm_faults: dict[tuple[int, int], Form] = field(default_factory=dict)
    tool_faults: dict[tuple[int, str, int], Form] = field(default_factory=dict)
    root: Form | None = None
    category: str = "clean_success"
    note: str = ""


@dataclass
class Outcome:
    spec: Spec
    success: bool
    error: str
    problems: list[str]
    fired: list[tuple[str, int, Form]]
    llm_steps: list[int]
    tool_steps: list[tuple[int, str]]


async def run_episode(spec: Spec, sim: Sim) -> Outcome:
    rng = random.Random(spec.seed)
    db, items = build_world(rng, spec.kinds)
    run = Run(db, items, spec.tool_faults)
    provider = BY_NAME[spec.provider]
    sim.sessions[spec.task_id] = Session(run, spec.persona, provider, spec.llm_faults, spec.timeout, spec.seed)
    llm = ChatOpenAI(model=provider.model, base_url=f"http://127.0.0.1:{sim.port}{provider.base_path}",
                     api_key="sk-sim-frontdesk", max_retries=spec.max_retries, timeout=spec.timeout,
                     streaming=spec.stream, temperature=0, default_headers={"X-Episode": spec.task_id})
    agent = create_react_agent(llm, make_tools(run), prompt=SYSTEM)
    limit = 2 * (sum(len(it.ops) for it in items) + 1) + 6
    error = ""
    success = False
    async with agentchaos_otel.episode(task_id=spec.task_id) as ep:
        try:
            out: dict[str, Any] = await agent.ainvoke(
                {"messages": [("user", task_text(items))]},
                config={"recursion_limit": limit, "callbacks": [StepCounter(run)]})
            last = out["messages"][-1]
            problems = grade(db, items)
            answered = isinstance(last, AIMessage) and bool(last.content) and not last.tool_calls \
                and not last.invalid_tool_calls
            success = answered and not problems and not str(last.content).startswith(("Could not", "I wasn't"))
            if not answered:
                error = "no final answer"
        except Exception as exc:  # the user's app: any exception fails the request
            error = f"{type(exc).__name__}: {str(exc)[:200]}"
            problems = grade(db, items)
        ep.set_outcome(success=success, error=error or None)
    del sim.sessions[spec.task_id]
    return Outcome(spec, success, error, problems, list(run.fired), list(run.llm_steps), list(run.tool_steps))
