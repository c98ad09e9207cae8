"""The hand-written agent loop: the official ``openai`` SDK's sync client, MCP tools over stdio, local tools.

This is how a team would write an accounts-payable agent without a framework: chat completions
with tools (streamed or not, as the episode's profile says), the SDK's own retries, one re-ask when
a reply comes back with nothing in it or a stream ends without a finish reason, a 3 s patience per
model call (a slower call is abandoned), and the ERP tools from an MCP server subprocess.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import agentchaos_otel
from agentchaos_otel import mcp as chaos_mcp
from benchmarks.blind.round5 import tools
from benchmarks.blind.round5.llm_server import PROFILES, ChatServer, Current
from benchmarks.blind.round5.world import Ledger, Task

PATIENCE = 3.0
CLIENT_TIMEOUT = 5.0
SYSTEM = (
    "You are the accounts-payable clerk of Example Industrie GmbH. Use the tools to reconcile vendor "
    "invoices with bank payments. Post each payment exactly once."
)


class McpTools:
    """One stdio MCP session to the ERP server, driven from the agent's thread.

    The coroutines run on a private event loop; ``run_coroutine_threadsafe`` schedules them with a
    copy of the calling thread's context, so each call belongs to the episode that made it.
    """

    def __init__(self, ledger: Path, root: Path) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "benchmarks.blind.round5.mcp_server", str(ledger)], cwd=str(root)
        )
        self.session: ClientSession | None = None
        self.ready = threading.Event()
        self.done: asyncio.Event | None = None
        self.owner = asyncio.run_coroutine_threadsafe(self._own(params), self.loop)
        if not self.ready.wait(60):
            raise RuntimeError("the ERP MCP server did not start")

    async def _own(self, params: StdioServerParameters) -> None:
        """Hold the session open in one task (the SDK's task groups must be left where they were entered)."""
        self.done = asyncio.Event()
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(stdio_client(params))
            self.session = await stack.enter_async_context(ClientSession(read, write))
            await self.session.initialize()
            await self.session.list_tools()
            self.ready.set()
            await self.done.wait()

    async def _call(self, name: str, args: dict[str, Any], call_id: str) -> tuple[str, bool]:
        assert self.session is not None
        with chaos_mcp.tool_call_id(call_id):
            res = await self.session.call_tool(name, args)
        text = "".join(getattr(c, "text", "") for c in (getattr(res, "content", None) or []))
        return text, bool(getattr(res, "is_error", False))

    def call(self, name: str, args: dict[str, Any], call_id: str) -> tuple[str, bool]:
        return asyncio.run_coroutine_threadsafe(self._call(name, args, call_id), self.loop).result(60)

    def close(self) -> None:
        assert self.done is not None
        self.loop.call_soon_threadsafe(self.done.set)
        self.owner.result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)


@dataclass
class EpisodePlan:
    """Everything one episode needs: the task, the clerk, the provider profile, the armed forms."""

    task: Task
    current: Current
    stream_mode: str  # never | always | alternate
    tool_faults: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    seed: int = 0


def tool_specs() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": tools.DESCRIPTIONS[n],
                "parameters": {
                    "type": "object",
                    "properties": {k: {"type": t} for k, t in tools.PARAMS[n].items()},
                    "required": tools.REQUIRED[n],
                },
            },
        }
        for n in (*tools.MCP_TOOLS, *tools.LOCAL_TOOLS)
    ]


class LocalTools:
    """Bank, FX, messaging and exception tools in the agent's process, over the same ledger."""

    def __init__(self, ledger: Ledger, faults: dict[tuple[str, int], dict[str, Any]]) -> None:
        self.ledger = ledger
        self.faults = faults
        self.counts: dict[str, int] = {}
        self.fired: list[tuple[str, int, str]] = []

    def make(self, name: str) -> Any:
        def tool(**args: Any) -> str:
            k = self.counts.get(name, -1) + 1
            self.counts[name] = k
            form = self.faults.get((name, k))
            if form is not None:
                self.fired.append((name, k, form["id"]))
            if form is not None and form["kind"] == "text" and not form["ran"]:
                return self._fail(form, name, args)
            with self.ledger.connect() as db:
                value = tools.run(db, name, args)
                if form is None:
                    return json.dumps(value)
                if form["kind"] == "text":
                    return self._fail(form, name, args)
                return tools.transform(form, name, value, db)

        tool.__name__ = name
        tool.__doc__ = tools.DESCRIPTIONS[name]
        return tool

    @staticmethod
    def _fail(form: dict[str, Any], name: str, args: dict[str, Any]) -> str:
        text = tools.fill(form["text"], name, args)
        exc = form.get("exc")
        if exc:
            raise {
                "TimeoutError": TimeoutError,
                "ConnectionRefusedError": ConnectionRefusedError,
                "ConnectionResetError": ConnectionResetError,
                "ConnectionError": ConnectionError,
                "PermissionError": PermissionError,
                "FileNotFoundError": FileNotFoundError,
                "OSError": OSError,
                "ZeroDivisionError": ZeroDivisionError,
            }[exc](text)
        return text


def _call_model(
    client: openai.OpenAI, model: str, messages: list[dict[str, Any]], stream: bool, specs: list[dict[str, Any]]
) -> tuple[dict[str, Any] | None, str | None]:
    """One chat completion (the SDK may retry inside); the assistant message and finish reason."""
    if not stream:
        resp = client.chat.completions.create(model=model, messages=messages, tools=specs, temperature=0)
        choices = getattr(resp, "choices", None)
        if not choices:
            return None, None
        m = choices[0].message
        msg: dict[str, Any] = {"role": "assistant", "content": m.content}
        if m.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": t.id,
                    "type": "function",
                    "function": {"name": t.function.name, "arguments": t.function.arguments},
                }
                for t in m.tool_calls
            ]
        return msg, choices[0].finish_reason
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    with client.chat.completions.create(
        model=model, messages=messages, tools=specs, temperature=0, stream=True
    ) as events:
        for ev in events:
            for ch in ev.choices or []:
                d = ch.delta
                if d.content:
                    content.append(d.content)
                for tc in d.tool_calls or []:
                    slot = calls.setdefault(
                        tc.index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                    )
                    if tc.id:
                        slot["id"] = tc.id
                    if tc.function and tc.function.name:
                        slot["function"]["name"] = tc.function.name
                    if tc.function and tc.function.arguments:
                        slot["function"]["arguments"] += tc.function.arguments
                if ch.finish_reason:
                    finish = ch.finish_reason
    msg = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        msg["tool_calls"] = [calls[i] for i in sorted(calls)]
    return msg, finish


def run_episode(plan: EpisodePlan, server: ChatServer, mcp: McpTools, ledger: Ledger) -> dict[str, Any]:
    """Run one task end to end; return what happened (steps, fired forms, outcome)."""
    task, cur = plan.task, plan.current
    mcp_faults = [(t, k, f) for (t, k), f in plan.tool_faults.items() if t in tools.MCP_TOOLS]
    ledger.load(task, mcp_faults)
    server.begin(cur)
    prof = PROFILES[cur.profile]
    local = LocalTools(ledger, {k: f for k, f in plan.tool_faults.items() if k[0] in tools.LOCAL_TOOLS})
    counts: dict[str, int] = {}
    specs = tool_specs()
    final: str | None = None
    error: str | None = None
    with agentchaos_otel.episode(task_id=task.task_id, seed=plan.seed) as ep:
        wrapped = ep.wrap_tools({n: local.make(n) for n in tools.LOCAL_TOOLS})
        client = openai.OpenAI(
            base_url=f"http://127.0.0.1:{server.port}{prof['path']}",
            api_key="sk-local-round5",
            max_retries=prof["retries"],
            timeout=CLIENT_TIMEOUT,
        )
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": task.prompt()},
        ]
        turn = 0
        reasked = False
        while turn < 60 and error is None and final is None:
            stream = plan.stream_mode == "always" or (plan.stream_mode == "alternate" and turn % 2 == 1)
            t0 = time.monotonic()
            try:
                msg, finish = _call_model(client, prof["model"], messages, stream, specs)
            except Exception as exc:  # the SDK gave up (after its retries) or the stream broke
                error = f"model call failed: {type(exc).__name__}"
                break
            if time.monotonic() - t0 > PATIENCE:
                error = "model call exceeded the agent's patience; abandoned"
                break
            if msg is None:
                error = "reply without choices"
                break
            empty = not msg.get("content") and not msg.get("tool_calls")
            if finish is None or (empty and finish not in ("content_filter", "error")):
                if reasked:
                    error = "no usable reply after asking again"
                    break
                reasked = True
                continue
            reasked = False
            turn += 1
            if finish == "content_filter":
                error = "reply blocked by the provider's content filter"
                break
            if finish == "error":
                error = "the provider reported an error in the reply"
                break
            if not msg.get("tool_calls"):
                final = msg.get("content") or ""
                break
            messages.append(msg)
            for tc in msg["tool_calls"]:
                name = tc["function"]["name"]
                try:
                    args = json.loads(tc["function"]["arguments"] or "{}")
                    if not isinstance(args, dict):
                        raise ValueError("arguments are not an object")
                except ValueError:
                    error = f"the model sent tool arguments that are not valid JSON ({name})"
                    break
                if name not in tools.PARAMS:
                    messages.append(
                        {"role": "tool", "tool_call_id": tc["id"], "content": f"Error: unknown tool {name}"}
                    )
                    continue
                k = counts.get(name, -1) + 1
                counts[name] = k
                cur.log.append(("tool", name, k))
                if name in tools.MCP_TOOLS:
                    text, is_error = mcp.call(name, args, tc["id"])
                    content = f"Error: {text}" if is_error else text
                else:
                    try:
                        content = wrapped[name](**args)
                    except Exception as exc:  # a tool that raised: the agent shows the model the message
                        content = f"Error: {exc}"
                messages.append({"role": "tool", "tool_call_id": tc["id"], "content": content})
        ok, why = (False, error) if error else ledger.grade(task, final)
        ep.set_outcome(success=ok, error=None if ok else why)
    client.close()
    mcp_fired = [(t, k, f) for t, k, f in ledger.fired()]
    return {
        "log": list(cur.log),
        "llm_fired": list(cur.fired),
        "tool_fired": mcp_fired + local.fired,
        "success": ok,
        "why": why,
        "final": final,
    }
