"""The SIMULATED model: decides the next tool call or the final answer from the conversation alone.

It walks the task's actions, reads each tool result for the one member it needs, repeats a call
whose result it cannot use (up to its patience) and gives up after that. It never checks a value
that reads well, so a wrong or stale value goes on into the writes and the task fails late. Its
own slips (a wrong argument, giving up, an unknown tool, invalid JSON, looping) are set per
episode for the failures that have no fault.
"""

from __future__ import annotations

import json
from typing import Any

from benchmarks.blind.round10.world import Action


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def read_value(action: Action, text: str) -> Any:
    """The value the model takes from a result, or None when it cannot use the result."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if action.kind == "write":
        return True if not any(k in data for k in ("error", "errors", "error_code", "status", "detail")) else None
    value = data.get(action.key)
    if action.key == "partitions":
        if not isinstance(value, list) or not value:
            return None
        lags = [p.get("lag") for p in value if isinstance(p, dict)]
        return sum(lags) if lags and all(isinstance(x, int) for x in lags) else None
    if action.key == "objects":
        return len(value) if isinstance(value, list) and value else None
    if action.key == "results":
        want = action.args.get("query")
        for r in value or []:
            if isinstance(r, dict) and r.get("table") == want and isinstance(r.get("job"), str):
                return r["job"]
        return None
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else None


def fill(args: dict[str, Any], memory: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in args.items():
        if isinstance(v, str) and v.startswith("={") and v.endswith("}"):
            expr = v[2:-1]
            out[k] = eval(expr, {"__builtins__": {"sum": sum, "str": str}}, dict(memory))  # noqa: S307
        elif isinstance(v, str):
            out[k] = v.format(**memory) if "{" in v else v
        else:
            out[k] = v
    return out


def decide(actions: list[Action], messages: list[dict[str, Any]], slip: dict[str, Any],
           patience: int) -> dict[str, Any]:
    """``{"final": text}`` or ``{"call": (tool, args)}`` or ``{"raw_call": (tool, raw_args)}``."""
    calls: dict[str, tuple[str, str]] = {}
    pointer, memory, bad = 0, {}, 0
    for m in messages:
        if m.get("role") == "assistant":
            for tc in m.get("tool_calls") or []:
                calls[tc["id"]] = (tc["function"]["name"], tc["function"]["arguments"])
        elif m.get("role") == "tool" and pointer < len(actions):
            name, raw = calls.get(m.get("tool_call_id", ""), ("", ""))
            action = actions[pointer]
            try:
                args = json.loads(raw)
            except ValueError:
                args = None
            expected = fill(action.args, memory)
            if name != action.tool or args != expected:
                # a repeat of an earlier call (a replayed answer) or a call of its own making
                if any(name == a.tool for a in actions[:pointer]) and args is not None:
                    continue
            value = read_value(action, _text(m.get("content")))
            if value is None:
                bad += 1
                if bad > patience:
                    if not slip.get("skip_bad") or action.kind == "write":
                        return {"final": f"I could not complete the task: {action.tool} did not return usable data."}
                    if action.save:   # noted as unavailable; the audit goes on without it
                        memory[action.save] = 0
                    pointer += 1
                    bad = 0
                continue
            bad = 0
            if action.save:
                memory[action.save] = value
            pointer += 1
    if slip.get("kind") == "give_up" and pointer >= slip["at"]:
        return {"final": "This looks like it needs a human to check; I'll stop here."}
    if slip.get("kind") == "loop" and pointer >= slip["at"]:
        action = actions[max(0, slip["at"] - 1)]
        return {"call": (action.tool, fill(action.args, memory))}
    if pointer >= len(actions):
        return {"final": "Done: " + ", ".join(f"{k}={v}" for k, v in sorted(memory.items()))}
    action = actions[pointer]
    args = fill(action.args, memory)
    if slip.get("at") == pointer and bad == 0:
        kind = slip.get("kind")
        if kind in ("wrong_arg", "absorbed_then_wrong"):
            key = slip["key"]
            args[key] = (args[key] + 1) if isinstance(args[key], (int, float)) else args[key] + "_v2"
        elif kind == "unknown_tool":
            return {"call": ("run_sql", args)}
        elif kind == "bad_json":
            return {"raw_call": (action.tool, json.dumps(args)[:-1] + ",}")}
    return {"call": (action.tool, args)}
