"""The travel-desk agent: a hand-written tool loop on ``openai.AsyncOpenAI``, traced with ``episode()``.

Four tools come over MCP (Streamable HTTP, official SDK), five are local functions behind
``Episode.wrap_tools``. Parallel tool calls of one reply run concurrently (``asyncio.gather``) in
the order the reply gave them. Streaming is on for some turns and off for others. The loop gives
up on an exception from the SDK (after the SDK's own retries), on a stream that stops before its
finish chunk, and on a stream that stalls longer than its watchdog.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import openai
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

import agentchaos_otel
from agentchaos_otel import mcp as chaos_mcp

from . import world
from .forms import ALL_FORMS
from .plan import EpisodePlan, ToolFaults, is_mcp
from .server import BASE_PATHS, CALL_INDEX, PROFILES
from .tools import shown_for

CLIENT_TIMEOUT_S = 4.0
WATCHDOG_S = 1.5
MAX_TURNS = 45
CALL_ID = "agentchaos_call_id"

TOOL_SCHEMAS = [
    (
        "get_traveller",
        "A traveller's profile (booking reference, fare paid, policy, seat preference, contact).",
        {"traveller_id": "string"},
        ["traveller_id"],
    ),
    (
        "search_flights",
        "Flights between two airports on a date, with fares and seats left.",
        {"origin": "string", "destination": "string", "date": "string"},
        ["origin", "destination", "date"],
    ),
    ("get_fare_rules", "Change fee and refund rules of a fare.", {"fare_id": "string"}, ["fare_id"]),
    (
        "hold_seat",
        "Hold a seat for a traveller on a flight (short-lived).",
        {"flight_id": "string", "traveller_id": "string", "seat_pref": "string"},
        ["flight_id", "traveller_id"],
    ),
    (
        "rebook_flight",
        "Move a booking onto a flight using a seat hold.",
        {"booking_ref": "string", "flight_id": "string", "hold_id": "string"},
        ["booking_ref", "flight_id", "hold_id"],
    ),
    (
        "issue_refund",
        "Refund an amount to the form of payment of a booking.",
        {"booking_ref": "string", "amount": "number", "currency": "string"},
        ["booking_ref", "amount"],
    ),
    (
        "find_hotels",
        "Hotels with rooms for one night.",
        {"city": "string", "checkin": "string", "area": "string"},
        ["city", "checkin"],
    ),
    (
        "book_ground",
        "Book a car between two places.",
        {"pickup": "string", "dropoff": "string", "pickup_time": "string"},
        ["pickup", "dropoff", "pickup_time"],
    ),
    (
        "notify_traveller",
        "Send a message to a traveller on a channel (sms or email).",
        {"traveller_id": "string", "channel": "string", "message": "string"},
        ["traveller_id", "channel", "message"],
    ),
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": n,
            "description": d,
            "parameters": {"type": "object", "properties": {k: {"type": t} for k, t in props.items()}, "required": req},
        },
    }
    for n, d, props, req in TOOL_SCHEMAS
]
SYSTEM = (
    "You are a travel desk agent. Rebook disrupted travellers onto the cheapest economy flight on the same "
    "day, refund any fare difference net of the change fee, arrange a hotel near the airport and a car to it "
    "when the arrival is overnight, notify every traveller on their channel with flight, seat and "
    "confirmation, and end with a summary that lists each confirmation."
)


class StreamStopped(Exception):
    """The stream ended before its finish chunk, or stalled past the watchdog."""


@dataclass
class Run:
    """What happened in one episode, as the agent saw it."""

    events: list[tuple[str, str, int]] = field(default_factory=list)  # ("llm", "", turn) | ("tool", name, occ)
    final: str = ""
    error: str = ""
    success: bool = False
    reason: str = ""


def _stream_turn(ep: EpisodePlan, turn: int) -> bool:
    if ep.stream_mode == "mixed":
        return int(hashlib.sha256(f"{ep.task_id}:{turn}".encode()).hexdigest(), 16) % 2 == 0
    return ep.stream_mode == "always"


def local_tools(ep: EpisodePlan, path: Path) -> dict[str, Any]:
    """The five local tools, with the plan's forms applied as the services behind them would answer."""
    faults = ToolFaults(ep)

    def run(name: str, args: dict[str, Any]) -> str:
        occ, fault = faults.next(name, args)
        form = ALL_FORMS[fault.form] if fault else None
        key = f"{ep.task_id}:{name}:{occ}"
        if form is not None:
            world.log_fault(path, "tool", 0, 0, name, occ, form.name)
            if form.kind != "data":
                shown = shown_for(form, key, args, None)
                if shown.raise_as == "ConnectionResetError":
                    raise ConnectionResetError(104, "Connection reset by peer")
                if shown.raise_as == "TimeoutError":
                    raise TimeoutError()
                return shown.text
        try:
            result = world.run_tool(path, name, args, str(occ))
        except world.ToolError as exc:
            return str(exc)
        return shown_for(form, key, args, result).text if form is not None else json.dumps(result)

    async def search_flights(**args: Any) -> str:
        return run("search_flights", args)

    def find_hotels(**args: Any) -> str:
        return run("find_hotels", args)

    async def book_ground(**args: Any) -> str:
        return run("book_ground", args)

    async def issue_refund(**args: Any) -> str:
        await asyncio.sleep(0)
        return run("issue_refund", args)

    def notify_traveller(**args: Any) -> str:
        return run("notify_traveller", args)

    return {
        "search_flights": search_flights,
        "find_hotels": find_hotels,
        "book_ground": book_ground,
        "issue_refund": issue_refund,
        "notify_traveller": notify_traveller,
    }


async def _complete(
    client: openai.AsyncOpenAI, model: str, messages: list[dict[str, Any]], stream: bool
) -> tuple[str, list[dict[str, Any]], str | None]:
    if not stream:
        resp = await client.chat.completions.create(
            model=model, messages=messages, tools=TOOLS, parallel_tool_calls=True
        )
        choices = getattr(resp, "choices", None)
        if not choices:
            raise RuntimeError("the reply has no choices")
        msg = choices[0].message
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in msg.tool_calls or []
        ]
        return msg.content or "", calls, choices[0].finish_reason
    s = await client.chat.completions.create(
        model=model, messages=messages, tools=TOOLS, parallel_tool_calls=True, stream=True
    )
    content: list[str] = []
    calls_by_index: dict[int, dict[str, Any]] = {}
    finish = None
    it = s.__aiter__()
    try:
        while True:
            try:
                chunk = await asyncio.wait_for(it.__anext__(), WATCHDOG_S)
            except StopAsyncIteration:
                break
            except TimeoutError:
                raise StreamStopped(f"no chunk for {WATCHDOG_S}s") from None
            if not chunk.choices:
                continue
            ch = chunk.choices[0]
            if ch.delta.content:
                content.append(ch.delta.content)
            for tc in ch.delta.tool_calls or []:
                slot = calls_by_index.setdefault(
                    tc.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
                if tc.id:
                    slot["id"] = tc.id
                if tc.function and tc.function.name:
                    slot["function"]["name"] = tc.function.name
                if tc.function and tc.function.arguments:
                    slot["function"]["arguments"] += tc.function.arguments
            if ch.finish_reason:
                finish = ch.finish_reason
    finally:
        await s.close()
    if finish is None:
        raise StreamStopped("the stream ended without a finish reason")
    return "".join(content), [calls_by_index[i] for i in sorted(calls_by_index)], finish


async def run_episode(
    ep: EpisodePlan, spec: world.TaskSpec, ports: dict[str, int], path: Path, semaphore: asyncio.Semaphore
) -> Run:
    run = Run()
    async with semaphore:
        headers = {"x-desk-task": ep.task_id}
        base = f"http://127.0.0.1:{ports['chat']}{BASE_PATHS[ep.provider]}"

        model = PROFILES[ep.provider]["model"]
        task_text = {
            "ticket": ep.task_id,
            "origin": spec.origin,
            "destination": spec.destination,
            "city": spec.city,
            "date": spec.date,
            "travellers": list(spec.travellers),
            "overnight": spec.overnight,
        }
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {
                "role": "user",
                "content": f"Flight cancelled: please rebook the travellers below.\nTICKET:{json.dumps(task_text)}",
            },
        ]
        async with agentchaos_otel.episode(task_id=ep.task_id, agent_name="travel-desk", simulated=True) as e:
            local = e.wrap_tools(local_tools(ep, path))
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as hc,
                streamable_http_client(f"http://127.0.0.1:{ports['mcp']}/mcp", http_client=hc) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                client = openai.AsyncOpenAI(
                    base_url=base,
                    api_key="desk-local-key",
                    max_retries=ep.max_retries,
                    timeout=CLIENT_TIMEOUT_S,
                    default_headers=headers,
                )

                async def call_tool(tc: dict[str, Any], name: str, args: dict[str, Any], index: int) -> str:
                    try:
                        if is_mcp(name):
                            with chaos_mcp.tool_call_id(tc["id"]):
                                res = await session.call_tool(name, args, meta={CALL_INDEX: index})
                            return "".join(getattr(c, "text", "") for c in res.content)
                        out = local[name](**args, **{CALL_ID: tc["id"]})
                        if asyncio.iscoroutine(out):
                            out = await out
                        return str(out)
                    except (ConnectionError, TimeoutError) as exc:
                        return (
                            "".join(traceback.format_exception_only(exc)).strip()
                            if isinstance(exc, ConnectionError)
                            else "".join(traceback.format_exception(exc)).strip()
                        )

                for turn in range(MAX_TURNS):
                    run.events.append(("llm", "", turn))
                    try:
                        content, calls, finish = await _complete(client, model, messages, _stream_turn(ep, turn))
                    except Exception as exc:  # the SDK's own retries are spent: the run ends here
                        run.error = f"{type(exc).__name__}: {str(exc)[:200]}"
                        break
                    if not calls:
                        run.final = content
                        break
                    messages.append({"role": "assistant", "content": content or None, "tool_calls": calls})
                    jobs = []
                    plain: list[tuple[dict[str, Any], str]] = []
                    for tc in calls:
                        name = tc["function"]["name"]
                        try:
                            args = json.loads(tc["function"]["arguments"] or "{}")
                            if not isinstance(args, dict):
                                raise ValueError("arguments are not an object")
                        except ValueError as exc:
                            plain.append((tc, f"Error: the arguments of {name} are not valid JSON ({exc})."))
                            continue
                        if name not in world.TOOL_NAMES:
                            plain.append((tc, f"Error: there is no tool named {name}."))
                            continue
                        index = sum(1 for ev in run.events if ev[:2] == ("tool", name))
                        run.events.append(("tool", name, index))
                        jobs.append((tc, call_tool(tc, name, args, index)))
                    results = await asyncio.gather(*(j for _, j in jobs))
                    answered = {id(tc): r for (tc, _), r in zip(jobs, results, strict=True)}
                    answered.update({id(tc): r for tc, r in plain})
                    for tc in calls:
                        messages.append({"role": "tool", "tool_call_id": tc["id"], "content": answered[id(tc)]})
                await client.close()
            run.success, run.reason = world.grade(path, spec, run.final) if not run.error else (False, run.error)
            e.set_outcome(success=run.success, error=None if run.success else run.reason)
    return run
