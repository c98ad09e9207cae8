"""What a tool call answers: the world's real result, or the scenario's fault in the shape its back end uses.

``answer`` is shared by the plain Python tools (``make_plain_tools``, wrapped by ``ep.wrap_tools``) and by the MCP
server, so the same fault reads the same whichever way the tool is served; only the envelope differs (a raised
exception or returned text for plain tools; an ``isError`` result, a JSON-RPC error or a gateway status over MCP).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from .runtime import EpisodeRuntime, ToolPlan, exc_class, fill, form_text, transform
from .world import TOOL_SPECS, World


@dataclass
class ToolAnswer:
    text: str | None
    is_error: bool = False
    exc: BaseException | None = None
    rpc: tuple[int, str, Any] | None = None
    http: dict[str, Any] | None = None


def _rid(plan: ToolPlan, world: World) -> str:
    return hashlib.sha1(f"{world.seed}:{plan.name}:{plan.occ}".encode()).hexdigest()[:16]


def _run(world: World, name: str, args: dict[str, Any]) -> Any:
    try:
        return world.call(name, args)
    except TypeError as e:  # the message a Python tool function would give for bad arguments
        raise TypeError(str(e).replace("World.", "")) from None


def natural_error(result: Any) -> bool:
    return isinstance(result, dict) and "error" in result and "status" in result


def answer(plan: ToolPlan, world: World) -> ToolAnswer:
    form = plan.form
    if form is None:
        result = _run(world, plan.name, plan.args)
        return ToolAnswer(json.dumps(result), is_error=natural_error(result))
    rid = _rid(plan, world)
    kind = form.kind
    result = None
    if kind.startswith("data:") or form.executes:
        result = _run(world, plan.name, plan.args)
    if kind.startswith("data:"):
        return ToolAnswer(transform(kind[5:], plan, world, result))
    if kind == "text":
        return ToolAnswer(form_text(form, plan, world, rid), is_error=True)
    if kind == "raise":
        module, cname = form.params["exc"]
        return ToolAnswer(None, is_error=True, exc=exc_class(module, cname)(fill(form.params["msg"], plan, world, rid)))
    if kind == "rpc":
        data = form.params.get("data")
        if isinstance(data, dict):
            data = json.loads(fill(json.dumps(data), plan, world, rid))
        return ToolAnswer(None, is_error=True, rpc=(form.params["code"], form.params["message"], data))
    if kind == "mcp_http":
        return ToolAnswer(None, is_error=True, http=form.params)
    raise ValueError(f"unknown tool form kind {kind}")


def make_plain_tools(rt: EpisodeRuntime) -> dict[str, Any]:
    """Plain Python tools for ``ep.wrap_tools``: each call one step, its fault applied as its back end would."""

    def make(name: str) -> Any:
        def tool(**kwargs: Any) -> str:
            plan = rt.begin_tool(name, kwargs, "plain")
            ans = answer(plan, rt.world)
            if ans.exc is not None:
                raise ans.exc
            assert ans.text is not None
            return ans.text

        tool.__name__ = name
        tool.__doc__ = TOOL_SPECS[name]["description"]
        return tool

    return {name: make(name) for name in TOOL_SPECS}
