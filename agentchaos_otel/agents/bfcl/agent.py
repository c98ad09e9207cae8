"""The BFCL multi-turn agent loop, driven through the official ``openai`` SDK.

It follows BFCL's ``inference_multi_turn_FC`` so results stay comparable: the whole conversation
is resent every step, a turn ends when the model answers without tool calls, and an episode that
needs more than ``step_cap`` tool-calling steps in one turn is force-quit (BFCL fails the whole
entry then). Two deliberate differences, both needed for fault-injection campaigns:

* tools run through a ``call_tool`` hook (the tool-result injector), so what the model is shown
  can differ from what the API returned while the API state always advances for real;
* bad model output never ends the episode: invalid JSON arguments, non-object arguments and
  unknown functions are answered with an error tool message, and the step goes on. BFCL instead
  drops the whole step and ends the turn; here only calls that actually executed are logged, so
  the checker replays exactly what changed state.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel.agents.bfcl.env import ERROR_PREFIX, BfclEnv, render_result
from agentchaos_otel.agents.bfcl.tasks import BfclTask, call_string

DEFAULT_STEP_CAP = 20  # BFCL's MAXIMUM_STEP_LIMIT
TOP_LOGPROBS = 20  # the most the Chat Completions API returns, and what the study used

CallTool = Callable[[str, dict[str, Any], str | None], Any]


@dataclass
class AgentRun:
    """What one episode did: the calls the checker replays plus counters for the trace."""

    executed: list[list[list[str]]] = field(default_factory=list)  # turn -> step -> call strings
    n_llm_calls: int = 0
    n_tool_calls: int = 0
    n_bad_calls: int = 0  # invalid JSON / non-object arguments / unknown function
    n_suppressed: int = 0  # calls an idempotency guard answered without executing them
    force_quit: bool = False
    error: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)


def _direct(env: BfclEnv) -> CallTool:
    def call(name: str, args: dict[str, Any], call_id: str | None) -> Any:
        return env.execute(name, args)
    return call


def _assistant_message(message: Any, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": getattr(message, "content", None)}
    if calls:
        out["tool_calls"] = [{"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
                             for cid, name, args in calls]
    return out


def _decode_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as exc:
        return None, f"{ERROR_PREFIX}the arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"{ERROR_PREFIX}the arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def _was_suppressed(call_tool: CallTool) -> bool:
    """A hook may say its last call was answered without executing (``suppressed_last()``)."""
    probe = getattr(call_tool, "suppressed_last", None)
    try:
        return bool(probe()) if callable(probe) else False
    except Exception:
        return False


def _safe_render(result: Any) -> str:
    try:
        return render_result(result)
    except Exception as exc:  # a fault may hand back something odd; the model still gets text
        return f"{ERROR_PREFIX}unrenderable tool result ({type(exc).__name__})"


def run_agent(task: BfclTask, client: Any, model: str, *, env: BfclEnv | None = None,
              call_tool: CallTool | None = None, temperature: float = 0.0,
              step_cap: int = DEFAULT_STEP_CAP, logprobs: bool = False,
              extra_body: dict[str, Any] | None = None) -> AgentRun:
    """Run every turn of ``task`` against ``client`` (an ``openai.OpenAI``).

    An exception from the API (after the SDK's own retries) ends the episode with ``error`` set
    and the remaining turns missing, which the checker grades as a failure, as BFCL would.
    ``logprobs`` asks for top-20 token logprobs, which entropy-based failure predictors read.
    """
    env = env if env is not None else BfclEnv(task)
    call_tool = call_tool if call_tool is not None else _direct(env)
    run = AgentRun()
    messages = run.messages
    for turn in range(task.n_turns):
        tools = task.tools_at(turn)
        messages.extend(task.turn_messages(turn))
        turn_log: list[list[str]] = []
        steps = 0
        while True:
            kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
            if tools:
                kwargs["tools"] = tools
            if logprobs:
                kwargs["logprobs"] = True
                kwargs["top_logprobs"] = TOP_LOGPROBS
            if extra_body:
                kwargs["extra_body"] = extra_body
            run.n_llm_calls += 1
            try:
                response = client.chat.completions.create(**kwargs)
                message = response.choices[0].message
            except Exception as exc:
                run.error = f"{type(exc).__name__}: {exc}"[:500]
                run.executed.append(turn_log)
                return run
            raw_calls = list(getattr(message, "tool_calls", None) or [])
            if not raw_calls:
                messages.append(_assistant_message(message, []))
                break
            calls = []
            for i, tc in enumerate(raw_calls):
                fn = getattr(tc, "function", None)
                name = str(getattr(fn, "name", "") or "")
                arguments = getattr(fn, "arguments", None)
                cid = getattr(tc, "id", None) or f"call_{turn}_{steps}_{i}"
                if arguments is None:
                    arguments = "{}"
                elif not isinstance(arguments, str):
                    arguments = json.dumps(arguments, default=str)
                calls.append((cid, name, arguments))
            messages.append(_assistant_message(message, calls))
            step_log: list[str] = []
            for cid, name, arguments in calls:
                args, problem = _decode_arguments(arguments)
                if problem is None and not env.has(name):
                    problem = f"{ERROR_PREFIX}name '{name}' is not defined"
                if problem is not None or args is None:
                    run.n_bad_calls += 1
                    content = problem or f"{ERROR_PREFIX}bad call"
                else:
                    step_log.append(call_string(name, args))
                    run.n_tool_calls += 1
                    try:
                        content = _safe_render(call_tool(name, args, cid))
                    except Exception as exc:  # the hook must not take the episode down
                        content = f"{ERROR_PREFIX}{type(exc).__name__}: {exc}"
                    if _was_suppressed(call_tool):  # not executed: the checker must not replay it
                        step_log.pop()
                        run.n_tool_calls -= 1
                        run.n_suppressed += 1
                messages.append({"role": "tool", "tool_call_id": cid, "content": content})
            turn_log.append(step_log)
            steps += 1
            if steps > step_cap:
                run.force_quit = True
                run.executed.append(turn_log)
                return run
        run.executed.append(turn_log)
    return run
