"""The same small agent written in each of five agent frameworks, for the framework matrix.

Each agent has one tool, ``get_weather(city)``, and talks to the loopback simulated model server
(``agentchaos_otel.sim``; every answer is SIMULATED), whose ``ToolLoop`` policy calls the tool
twice and then answers: three LLM requests and two tool runs per task when nothing is faulted.
The frameworks are imported only inside their builder, so this module imports in any venv.

``build(framework, base_url, own_tracing=...)`` returns an ``Agent``: ``run(prompt)`` runs one
task and returns the final text; ``tool_runs`` counts the tool's real executions. With
``own_tracing`` the framework's own tracing is switched on: OpenInference's LangChain
instrumentation, LiteLLM's ``otel`` callback, pydantic-ai's ``Agent.instrument_all()``, the Agents SDK's
traces through OpenInference's trace processor; Google ADK always writes its native spans.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel.sim.policy import Turn

FRAMEWORKS = ("openai-agents", "pydantic-ai", "langgraph", "litellm", "google-adk")
# The module each framework is imported as: its venv is the one where this imports.
IMPORT_NAME = {"openai-agents": "agents", "pydantic-ai": "pydantic_ai", "langgraph": "langgraph",
               "litellm": "litellm", "google-adk": "google.adk"}
MODEL = "sim-fw"
TOOL_CALLS = 2
CITIES = ("Paris", "Rome", "Oslo")
INSTRUCTIONS = "Answer weather questions with the get_weather tool."


class ToolLoop:
    """SIMULATED model: calls the first declared tool once per city, then answers in text.

    A pure function of the request (the server is stateless): the number of tool results already
    in the conversation says which turn this is. Never evidence about a real model.
    """

    name = MODEL

    def respond(self, request: dict[str, Any], rng: random.Random) -> Turn:
        messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
        done = sum(1 for m in messages if m.get("role") == "tool")
        tools = [t["function"]["name"] for t in request.get("tools") or []
                 if isinstance(t, dict) and isinstance(t.get("function"), dict)]
        if done < TOOL_CALLS and tools:
            return Turn(tool_calls=[(tools[0], {"city": CITIES[done]})])
        return Turn(content="Paris is sunny and Rome is sunny too. DONE")


@dataclass
class Agent:
    run: Callable[[str], str]
    tool_runs: list[str] = field(default_factory=list)


def _weather(runs: list[str]) -> Callable[[str], str]:
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        runs.append(city)
        return json.dumps({"city": city, "sky": "sunny", "celsius": 21})

    return get_weather


def _openai_agents(base_url: str, own_tracing: bool) -> Agent:
    import agents
    from openai import AsyncOpenAI

    runs: list[str] = []
    if own_tracing:
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        agents.set_trace_processors([])  # no export to the vendor's backend (no network here)
        OpenAIAgentsInstrumentor().instrument()
    else:
        agents.set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key="sk-framework-test", max_retries=2)
    model = agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
    agent = agents.Agent(name="weather", instructions=INSTRUCTIONS, model=model,
                         tools=[agents.function_tool(_weather(runs))])

    def run(prompt: str) -> str:
        return str(agents.Runner.run_sync(agent, prompt).final_output)

    return Agent(run, runs)


def _pydantic_ai(base_url: str, own_tracing: bool) -> Agent:
    from pydantic_ai import Agent as PAgent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    runs: list[str] = []
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=base_url, api_key="sk-framework-test"))
    PAgent.instrument_all(own_tracing)  # its GenAI spans through the global tracer provider
    agent = PAgent(model, instructions=INSTRUCTIONS, tools=[_weather(runs)])

    def run(prompt: str) -> str:
        return str(agent.run_sync(prompt).output)

    return Agent(run, runs)


def _langgraph(base_url: str, own_tracing: bool) -> Agent:
    import warnings

    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    if own_tracing:
        from openinference.instrumentation.langchain import LangChainInstrumentor

        if not LangChainInstrumentor().is_instrumented_by_opentelemetry:
            LangChainInstrumentor().instrument()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

        runs: list[str] = []
        llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="sk-framework-test", max_retries=2)
        graph = create_react_agent(llm, [tool(_weather(runs))], prompt=INSTRUCTIONS)

    turns = itertools.count()

    def run(prompt: str) -> str:
        question = {"messages": [("user", prompt)]}
        # Every other task the async way: LangChain then runs the tracer's callbacks in executor
        # threads, away from the task that makes the HTTP call.
        out = asyncio.run(graph.ainvoke(question)) if next(turns) % 2 else graph.invoke(question)
        return str(out["messages"][-1].content)

    return Agent(run, runs)


def _litellm(base_url: str, own_tracing: bool) -> Agent:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import
    import litellm

    runs: list[str] = []
    weather = _weather(runs)
    if own_tracing and "otel" not in litellm.callbacks:
        litellm.callbacks = [*litellm.callbacks, "otel"]
    spec = {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}

    def run(prompt: str) -> str:
        messages: list[dict[str, Any]] = [{"role": "system", "content": INSTRUCTIONS},
                                          {"role": "user", "content": prompt}]
        for _ in range(8):
            resp = litellm.completion(model=f"openai/{MODEL}", api_base=base_url, api_key="sk-framework-test",
                                      messages=messages, tools=[spec], max_retries=2)
            msg = resp.choices[0].message
            calls = msg.tool_calls or []
            if not calls:
                return str(msg.content or "")
            messages.append({"role": "assistant", "content": msg.content, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.function.name,
                                                              "arguments": c.function.arguments}} for c in calls]})
            for c in calls:
                try:
                    args = json.loads(c.function.arguments or "{}")
                    result = weather(**args)
                except (ValueError, TypeError) as exc:
                    result = f"error: {exc}"
                messages.append({"role": "tool", "tool_call_id": c.id, "content": result})
        return ""

    return Agent(run, runs)


def _google_adk(base_url: str, own_tracing: bool) -> Agent:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    runs: list[str] = []
    model = LiteLlm(model=f"openai/{MODEL}", api_base=base_url, api_key="sk-framework-test")
    agent = LlmAgent(name="weather", model=model, instruction=INSTRUCTIONS, tools=[_weather(runs)])
    runner = InMemoryRunner(agent=agent, app_name="matrix")

    async def arun(prompt: str) -> str:
        session = await runner.session_service.create_session(app_name="matrix", user_id="u")
        text = ""
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=prompt)])):
            for part in (event.content.parts if event.content and event.content.parts else []):
                if part.text:
                    text = part.text
        return text

    def run(prompt: str) -> str:
        return asyncio.run(arun(prompt))

    return Agent(run, runs)


BUILDERS: dict[str, Callable[[str, bool], Agent]] = {
    "openai-agents": _openai_agents, "pydantic-ai": _pydantic_ai, "langgraph": _langgraph,
    "litellm": _litellm, "google-adk": _google_adk,
}


def build(framework: str, base_url: str, *, own_tracing: bool = False) -> Agent:
    return BUILDERS[framework](base_url, own_tracing)
