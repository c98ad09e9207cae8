"""One episode: an OpenAI Agents SDK agent on the loopback provider, traced as an Agents SDK user does.

``configure()`` + ``episode()`` with OpenInference's Agents SDK instrumentor (exclusive: the SDK's
export to OpenAI's platform is replaced), local ``function_tool`` tools plus MCP tools through
``MCPServerStreamableHttp``; ``Runner.run`` or ``Runner.run_streamed``; graded by the world.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

import agentchaos_otel
from benchmarks.blind.round10.llm_server import EPISODES, LOCK, PERSONAS
from benchmarks.blind.round10.tools import CURRENT, LOCAL_TOOLS
from benchmarks.blind.round10.world import Action, World


@dataclass
class Fault:
    form: str
    at: int               # the n-th LLM request or tool call of the episode
    persist: bool = False  # also every later identical request / identical tool call
    applied: bool = False
    call: str = ""         # tool faults: the first call with this tool and these arguments
    fired: bool = False


@dataclass
class Spec:
    task_id: str
    task: str
    world_seed: int
    actions: list[Action]
    expect: dict[str, Any]
    persona: int
    streamed: bool
    max_retries: int
    max_turns: int
    patience: int = 1
    slip: dict[str, Any] = field(default_factory=dict)
    llm_faults: list[Fault] = field(default_factory=list)
    tool_faults: list[Fault] = field(default_factory=list)
    timeout: float = 4.0
    deadline: float = 30.0


class EpisodeState:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.seed = spec.world_seed
        self.world = World(spec.world_seed)
        self.actions = spec.actions
        self.slip = spec.slip
        self.patience = spec.patience
        self.persona = PERSONAS[spec.persona]
        self.timeout = spec.timeout
        self.deadline = spec.deadline
        self.llm_n = 0
        self.tool_n = 0
        self.events: list[tuple[str, str]] = []
        self.pending: list[tuple[int, str]] = []   # tool steps announced by the last answer, not yet run
        self.current_step = -1
        self.tool_calls: list[tuple[str, str]] = []
        self.last_reply: bytes | None = None
        self.fault_steps: list[int] = []   # event index of each fault that fired
        self._persist_llm: Fault | None = None
        self._persist_tool: dict[str, Fault] = {}

    def rng_hex(self, n: int) -> str:
        return hashlib.sha256(f"{self.spec.task_id}/{n}".encode()).hexdigest()[:29]

    def llm_fault(self, n: int) -> Fault | None:
        for f in self.spec.llm_faults:
            if f.at == n:
                self._persist_llm = f if f.persist else None
                self.fault_steps.append(len(self.events) - 1)
                return f
        if self._persist_llm is not None:
            return self._persist_llm
        return None

    def tool_fault(self, n: int, tool: str, args: dict[str, Any]) -> Fault | None:
        key = tool + json.dumps(args, sort_keys=True)
        for f in self.spec.tool_faults:
            if not f.fired and f.call == key:
                f.fired = True
                if f.persist:
                    self._persist_tool[key] = f
                self.fault_steps.append(self.current_step)
                return f
        f = self._persist_tool.get(key)
        if f is not None:
            f.applied = True
        return f


def grade(world: World, expect: dict[str, Any]) -> bool:
    runs = sorted(r[0] for r in world.q("SELECT job FROM runs"))
    grants = sorted(world.q("SELECT user, tbl, role FROM grants"))
    alerts = world.q("SELECT message FROM alerts")
    tiles = {(d, t): v for d, t, v in world.q("SELECT dashboard, tile, value FROM tiles")}
    if runs != sorted(expect.get("runs", [])):
        return False
    if grants != sorted(tuple(g) for g in expect.get("grants", [])):
        return False
    want_alerts = expect.get("alerts", [])
    if len(alerts) != len(want_alerts) or any(w not in a[0] for w, a in zip(want_alerts, alerts, strict=False)):
        return False
    for (d, t), v in expect.get("tiles", {}).items():
        if tiles.get((d, t)) != float(v):
            return False
    return len(tiles) == len(expect.get("tiles", {}))


INSTRUCTIONS = ("You are the data platform on-call assistant. Use the tools to inspect the warehouse, catalog, "
                "jobs, storage and streams, then make exactly the changes the request asks for.")


async def run_episode(spec: Spec, llm_port: int, mcp_port: int) -> dict[str, Any]:
    state = EpisodeState(spec)
    with LOCK:
        EPISODES[spec.task_id] = state
    CURRENT.set(state)
    persona = state.persona
    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{llm_port}{persona.base}", api_key="sk-loopback-round10",
                         max_retries=spec.max_retries, timeout=spec.timeout,
                         default_headers={"X-Episode": spec.task_id})
    model = OpenAIChatCompletionsModel(model=persona.model, openai_client=client)
    error = ""
    with agentchaos_otel.episode(spec.task_id, plan=None, seed=spec.world_seed, agent_name="data-platform-assistant",
                                 simulated=True) as ep:
        server = MCPServerStreamableHttp(
            params={"url": f"http://127.0.0.1:{mcp_port}/mcp", "headers": {"X-Episode": spec.task_id},
                    "timeout": 10}, cache_tools_list=True, name="data-platform-mcp", client_session_timeout_seconds=10)
        try:
            async with server:
                agent = Agent(name="data-platform-assistant", instructions=INSTRUCTIONS, tools=list(LOCAL_TOOLS),
                              mcp_servers=[server], model=model,
                              model_settings=ModelSettings(parallel_tool_calls=True, temperature=0))
                task = "Request " + spec.task_id + ": " + spec.task

                async def go() -> None:
                    if spec.streamed:
                        result = Runner.run_streamed(agent, task, max_turns=spec.max_turns)
                        async for _ in result.stream_events():
                            pass
                    else:
                        await Runner.run(agent, task, max_turns=spec.max_turns)

                await asyncio.wait_for(go(), spec.deadline)
        except BaseException as exc:  # noqa: BLE001 - the outcome is graded from the world either way
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            error = f"{type(exc).__name__}: {str(exc)[:200]}"
        ok = grade(state.world, spec.expect)
        ep.set_outcome(success=ok, error=None if ok else (error or "final state does not match the request"))
    await client.close()
    with LOCK:
        EPISODES.pop(spec.task_id, None)
    return {"task_id": spec.task_id, "success": ok, "events": list(state.events),
            "fault_steps": list(state.fault_steps), "error": error}
