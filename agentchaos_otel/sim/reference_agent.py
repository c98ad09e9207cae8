"""The reference tool-using agent (official ``openai`` SDK).

:func:`run_reference_agent` / :func:`run_reference_agent_async` are an ordinary production-style
agent loop: send the conversation and tool declarations, execute the requested tool calls, append
the results, stop on a text answer. It must survive anything a faulted response can be (no
choices, empty turns, invalid JSON arguments, unknown tools, SDK exceptions) because the toolkit's
claim is that faults change outcomes, not that they crash the agent.

The simulated model that plays it, :class:`ReferencePolicy`, lives in ``reference_policy`` and is
re-exported here because callers build the server and the agent from one import.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel.inject.tools import call_id_keyword
from agentchaos_otel.sim.reference_policy import ReferencePolicy
from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, TOOL_SPECS, RefTask, ToolLogEntry

__all__ = ["EMPTY_NUDGE", "SYSTEM_PROMPT", "AgentRun", "ReferencePolicy", "run_reference_agent",
           "run_reference_agent_async"]

SYSTEM_PROMPT = ("You are a careful assistant. Use the tools to look up every fact you are asked for; "
                 "the tools return simulated data. When you have everything, reply with one line per "
                 "question in the form `<number>. <answer>`.")
EMPTY_NUDGE = "Your last reply was empty. Please continue with the task."


@dataclass
class AgentRun:
    """Outcome of one reference-agent episode, as the agent itself saw it.

    ``llm_calls`` counts chat requests made, including one that raised; ``tool_calls`` counts the
    calls the model asked for, executed or not; ``tool_log`` holds each of them with the text the
    model was shown, and is what the grader checks bookings against.
    """

    success: bool
    final_text: str | None
    llm_calls: int
    tool_calls: int
    error: str | None
    tool_log: list[ToolLogEntry] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _PendingCall:
    id: str
    name: str
    arguments_text: str


def _tool_declarations(tools: Mapping[str, Callable[..., Any]]) -> list[dict[str, Any]]:
    out = []
    for name in tools:
        spec = TOOL_SPECS.get(name)
        out.append(spec if spec is not None else {"type": "function", "function": {
            "name": name, "description": "", "parameters": {"type": "object", "properties": {}}}})
    return out


def _attr(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _message_from_response(resp: Any) -> tuple[str | None, list[_PendingCall], str | None]:
    """Content, tool calls and finish reason of a (possibly faulted) completion, never raising."""
    choices = _attr(resp, "choices")
    if not choices:
        return None, [], None
    try:
        choice = choices[0]
    except (TypeError, IndexError, KeyError):
        return None, [], None
    message = _attr(choice, "message")
    content = _attr(message, "content")
    if content is not None and not isinstance(content, str):
        content = str(content)
    calls = []
    for i, tc in enumerate(_attr(message, "tool_calls") or []):
        fn = _attr(tc, "function")
        name = _attr(fn, "name")
        args = _attr(fn, "arguments")
        calls.append(_PendingCall(str(_attr(tc, "id") or f"call_local_{i}"), str(name or ""),
                                  args if isinstance(args, str) else json.dumps(args)))
    finish = _attr(choice, "finish_reason")
    return content, calls, str(finish) if finish is not None else None


class _StreamAccumulator:
    """Rebuilds the assistant message from ``chat.completion.chunk`` deltas."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.saw_content = False

    def add(self, chunk: Any) -> None:
        for choice in _attr(chunk, "choices") or []:
            if (_attr(choice, "index") or 0) != 0:
                continue
            delta = _attr(choice, "delta")
            text = _attr(delta, "content")
            if isinstance(text, str):
                self.saw_content = True
                self.content.append(text)
            for tc in _attr(delta, "tool_calls") or []:
                idx = _attr(tc, "index")
                slot = self.calls.setdefault(idx if isinstance(idx, int) else 0,
                                             {"id": None, "name": "", "arguments": ""})
                if _attr(tc, "id"):
                    slot["id"] = str(_attr(tc, "id"))
                fn = _attr(tc, "function")
                if _attr(fn, "name"):
                    slot["name"] += str(_attr(fn, "name"))
                if isinstance(_attr(fn, "arguments"), str):
                    slot["arguments"] += _attr(fn, "arguments")
            if _attr(choice, "finish_reason"):
                self.finish = str(_attr(choice, "finish_reason"))

    def result(self) -> tuple[str | None, list[_PendingCall], str | None]:
        content = "".join(self.content) if self.saw_content else None
        calls = [_PendingCall(str(c["id"] or f"call_local_{i}"), c["name"], c["arguments"])
                 for i, c in sorted(self.calls.items())]
        return content, calls, self.finish


class _AgentLoop:
    """The agent's state and decisions; the sync and async drivers only do the I/O."""

    def __init__(self, task: RefTask, tools: Mapping[str, Callable[..., Any]] | None, *, model: str,
                 max_steps: int, stream: bool, request_options: Mapping[str, Any] | None,
                 max_empty_retries: int) -> None:
        self.task = task
        self.tools = dict(REFERENCE_TOOLS if tools is None else tools)
        self.model = model
        self.max_steps = max_steps
        self.stream = stream
        self.options = dict(request_options or {})
        self.max_empty_retries = max_empty_retries
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                               {"role": "user", "content": task.prompt}]
        self.declarations = _tool_declarations(self.tools)
        self.llm_calls = 0
        self.tool_calls = 0
        self.empty_turns = 0
        self.tool_log: list[ToolLogEntry] = []
        self.final: AgentRun | None = None

    def request(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": list(self.messages), **self.options}
        if self.declarations:
            kwargs["tools"] = self.declarations
        if self.stream:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    def finish(self, final_text: str | None, error: str | None = None) -> AgentRun:
        success = error is None and self.task.check(final_text, self.tool_log)
        self.final = AgentRun(success=success, final_text=final_text, llm_calls=self.llm_calls,
                              tool_calls=self.tool_calls, error=error, tool_log=self.tool_log,
                              messages=self.messages)
        return self.final

    def absorb(self, content: str | None, calls: list[_PendingCall]) -> list[_PendingCall]:
        """Record the assistant turn; returns the calls to execute (none when the episode ended)."""
        self.llm_calls += 1
        if calls:
            self.messages.append({"role": "assistant", "content": content, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_text}}
                for c in calls]})
            return calls
        self.messages.append({"role": "assistant", "content": content or ""})
        if content is None or not content.strip():
            if self.empty_turns < self.max_empty_retries:
                self.empty_turns += 1
                self.messages.append({"role": "user", "content": EMPTY_NUDGE})
                return []
        self.finish(content or "")
        return []

    def prepare(self, call: _PendingCall) -> tuple[Callable[..., Any], dict[str, Any]] | str:
        """The function and arguments to run, or the error text to show the model instead."""
        self.tool_calls += 1
        fn = self.tools.get(call.name)
        if fn is None:
            return f"Error: unknown tool {call.name!r}. Available tools: {', '.join(self.tools)}."
        try:
            args = json.loads(call.arguments_text) if call.arguments_text.strip() else {}
        except ValueError as exc:
            return (f"Error: the arguments for {call.name} are not valid JSON ({exc}). "
                    "Call the tool again with valid JSON arguments.")
        if not isinstance(args, dict):
            return f"Error: the arguments for {call.name} must be a JSON object."
        return fn, args

    def record(self, call: _PendingCall, args: dict[str, Any] | None, result: Any, executed: bool) -> None:
        if isinstance(result, str):
            text = result
        elif isinstance(result, bytes | bytearray):
            text = bytes(result).decode("utf-8", "replace")
        else:
            try:
                text = json.dumps(result, ensure_ascii=False, default=str)
            except (TypeError, ValueError):
                text = str(result)
        self.tool_log.append(ToolLogEntry(call.name, args, text, call.id, executed))
        self.messages.append({"role": "tool", "tool_call_id": call.id, "content": text})

    def out_of_steps(self) -> AgentRun:
        return self.finish(None, error=f"max_steps ({self.max_steps}) reached without a final answer")


def _error_text(exc: BaseException) -> str:
    return f"Error: {type(exc).__name__}: {exc}"


def _tool_kwargs(fn: Callable[..., Any], args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """The model's arguments, plus the call id when ``fn`` is a tool-fault-injector wrapper."""
    keyword = call_id_keyword(fn)
    return {**args, keyword: call_id} if keyword is not None else args


def run_reference_agent(client: Any, task: RefTask, *, model: str,
                        tools: Mapping[str, Callable[..., Any]] | None = None, max_steps: int = 30,
                        stream: bool = False, request_options: Mapping[str, Any] | None = None,
                        max_empty_retries: int = 1) -> AgentRun:
    """Run one episode with a sync ``openai.OpenAI`` client; never raises for what the model returns.

    ``tools`` maps names to callables invoked as ``fn(**arguments)`` (default: the simulated
    reference tools); callables wrapped by ``ToolFaultInjector`` also get the model's tool-call id
    out of band, so their ``execute_tool`` spans join up with the call. ``request_options`` are
    passed to every ``chat.completions.create`` call (e.g. ``{"logprobs": True, "top_logprobs":
    20}``). After an empty model turn the agent asks once more (``max_empty_retries``) before
    accepting it as the answer.
    """
    loop = _AgentLoop(task, tools, model=model, max_steps=max_steps, stream=stream,
                      request_options=request_options, max_empty_retries=max_empty_retries)
    while loop.final is None:
        if loop.llm_calls >= max_steps:
            return loop.out_of_steps()
        try:
            resp = client.chat.completions.create(**loop.request())
            if stream:
                acc = _StreamAccumulator()
                for chunk in resp:
                    acc.add(chunk)
                content, calls, _ = acc.result()
            else:
                content, calls, _ = _message_from_response(resp)
        except Exception as exc:  # SDK errors and anything a faulted response provokes end the episode
            loop.llm_calls += 1
            return loop.finish(None, error=f"{type(exc).__name__}: {exc}")
        for call in loop.absorb(content, calls):
            prepared = loop.prepare(call)
            if isinstance(prepared, str):
                loop.record(call, None, prepared, executed=False)
                continue
            fn, args = prepared
            try:
                result = fn(**_tool_kwargs(fn, args, call.id))
                if inspect.isawaitable(result):
                    close = getattr(result, "close", None)
                    if callable(close):
                        close()
                    raise TypeError(f"tool {call.name!r} is async; use run_reference_agent_async")
            except Exception as exc:
                loop.record(call, args, _error_text(exc), executed=False)
                continue
            loop.record(call, args, result, executed=True)
    return loop.final


async def run_reference_agent_async(client: Any, task: RefTask, *, model: str,
                                    tools: Mapping[str, Callable[..., Any]] | None = None,
                                    max_steps: int = 30,
                                    stream: bool = False, request_options: Mapping[str, Any] | None = None,
                                    max_empty_retries: int = 1) -> AgentRun:
    """:func:`run_reference_agent` for ``openai.AsyncOpenAI``; tools may be sync or async callables."""
    loop = _AgentLoop(task, tools, model=model, max_steps=max_steps, stream=stream,
                      request_options=request_options, max_empty_retries=max_empty_retries)
    while loop.final is None:
        if loop.llm_calls >= max_steps:
            return loop.out_of_steps()
        try:
            resp = await client.chat.completions.create(**loop.request())
            if stream:
                acc = _StreamAccumulator()
                async for chunk in resp:
                    acc.add(chunk)
                content, calls, _ = acc.result()
            else:
                content, calls, _ = _message_from_response(resp)
        except Exception as exc:
            loop.llm_calls += 1
            return loop.finish(None, error=f"{type(exc).__name__}: {exc}")
        for call in loop.absorb(content, calls):
            prepared = loop.prepare(call)
            if isinstance(prepared, str):
                loop.record(call, None, prepared, executed=False)
                continue
            fn, args = prepared
            try:
                result = fn(**_tool_kwargs(fn, args, call.id))
                if inspect.isawaitable(result):
                    result = await result
            except Exception as exc:
                loop.record(call, args, _error_text(exc), executed=False)
                continue
            loop.record(call, args, result, executed=True)
    return loop.final
