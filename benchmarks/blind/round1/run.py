"""Running one planned episode: fault plan, tool layer, client, agent, outcome and label."""

from __future__ import annotations

import inspect
import json
import random
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import httpx2
import openai

from .agent import Outcome, run_agent
from .forms import LLM_BY_NAME, TOOL_BY_NAME, Form
from .model import ModelCfg, ScriptedModel
from .provider import Ctx, Provider
from .world import TASK_TOOLS, TOOL_SCHEMAS, Task, ToolFailure, World, make_tools

NONIDEM = {"create_ticket", "issue_refund"}


@dataclass
class FaultSpec:
    form: str
    role: str = "root"  # root | absorbed | second
    # llm triggers
    when: str | None = None  # any | final | call (default: the form's)
    min_attempt: int = 0
    item: str | None = None  # the turn must call an item whose key starts with this
    prev_call: str | None = None  # the previously delivered response called this tool
    # tool triggers
    tool: str | None = None
    nth: int = 0  # first occurrence (0-based) of the tool it applies to
    count: int = 1  # consecutive applications
    params: dict[str, Any] = field(default_factory=dict)
    started: bool = False
    used: int = 0

    @property
    def f(self) -> Form:
        return LLM_BY_NAME.get(self.form) or TOOL_BY_NAME[self.form]


@dataclass
class Plan:
    task_id: str
    category: str  # faulted_failure | clean_success | benign_success | unfaulted_failure
    shape: str  # short | long | two-fault
    task: Task
    cfg: ModelCfg
    faults: list[FaultSpec]
    stream: bool = False
    max_retries: int = 2
    client_timeout: float = 10.0
    deadline: float | None = None
    slow_s: float = 1.5
    max_turns: int = 12
    vendor: str = "openai"
    model: str = "gpt-4o-mini-2024-07-18"
    gateway: bool = False
    note: str = ""


class EpisodeRun:
    def __init__(self, plan: Plan, world: World, provider: Provider, ordinal: int, seed: int) -> None:
        self.plan, self.provider, self.ordinal, self.seed = plan, provider, ordinal, seed
        self.task_id = plan.task_id
        self.world = world.fresh()
        self.task = plan.task
        self.model = ScriptedModel(plan.task, plan.cfg, f"{seed}:{plan.task_id}")
        self.vendor = plan.vendor
        self.client_timeout = plan.client_timeout
        self.slow_s = plan.slow_s
        self.gateway_close = plan.gateway
        self.events: list[dict[str, Any]] = []
        self.llm_attempts = 0
        self.tool_occ: dict[str, int] = {}
        self.delivered: list[dict[str, Any]] = []
        self.applied: list[tuple[int, FaultSpec]] = []
        self.gw: Provider | None = None
        self.gateway_down: FaultSpec | None = None
        self.real_tools = make_tools(self.world)
        self.rng = random.Random(f"{seed}:{plan.task_id}:run")

    # ------------------------------------------------------------------ LLM side
    def on_llm_attempt(self, _request: Any = None) -> None:
        self.events.append({"kind": "llm", "name": None, "form": None})
        self.llm_attempts += 1
        if self.gateway_down is not None:
            self._mark(len(self.events) - 1, self.gateway_down)

    def _mark(self, ev: int, spec: FaultSpec) -> None:
        self.events[ev]["form"] = spec.form
        self.applied.append((ev, spec))

    def before_llm_call(self) -> None:
        for spec in self.plan.faults:
            if spec.form == "gateway-connection-refused" and not spec.started and self.llm_attempts >= spec.min_attempt:
                spec.started = True
                if self.gw is not None:
                    self.gw.stop()
                self.gateway_down = spec

    def _pick_llm(self, idx: int, action: Any, stream: bool) -> FaultSpec | None:
        for spec in self.plan.faults:
            if spec.form not in LLM_BY_NAME or spec.form == "gateway-connection-refused":
                continue
            if spec.used >= spec.count:
                continue
            if spec.started:
                spec.used += 1
                return spec
            if idx < spec.min_attempt:
                continue
            f = LLM_BY_NAME[spec.form]
            when = spec.when or f.when
            if when == "final" and not action.is_final:
                continue
            if when == "call" and action.is_final:
                continue
            if f.stream == "only" and not stream or f.stream == "never" and stream:
                continue
            if spec.item and not any(k.startswith(spec.item) for k in action.items):
                continue
            if spec.prev_call:
                if not self.delivered:
                    continue
                tcs = self.delivered[-1]["choices"][0]["message"].get("tool_calls") or []
                if not any(t["function"]["name"] == spec.prev_call for t in tcs):
                    continue
            if f.name in ("semantic-cache-replay-previous", "prefix-keyed-cache-replay") and not self.delivered:
                continue
            spec.started = True
            spec.used += 1
            return spec
        return None

    def serve_llm(self, handler: Any, body: dict[str, Any]) -> None:
        idx = self.llm_attempts - 1
        ev = max(i for i, e in enumerate(self.events) if e["kind"] == "llm")
        action = self.model.decide(body.get("messages", []))
        spec = self._pick_llm(idx, action, bool(body.get("stream")))
        ctx = Ctx(handler, body, action, self, idx)
        if spec is None:
            ctx.send_completion(action, record=True)
            return
        self._mark(ev, spec)
        spec.f.render(ctx)

    def other_id(self, key: str, value: str) -> str:
        pools = {
            "order_id": sorted(self.world.orders),
            "customer_id": sorted(self.world.customers),
            "sku": sorted(self.world.products),
        }
        pool = [v for v in pools[key] if v != value]
        r = random.Random(f"{self.seed}:{self.task_id}:other:{value}")
        if key == "order_id" and hasattr(self.task, "order_ids"):
            pool = [v for v in pool if v not in self.task.order_ids] or pool
        if key == "order_id":
            cur = self.world.orders[value]["currency"] if value in self.world.orders else None
            same = [v for v in pool if self.world.orders[v]["currency"] == cur]
            pool = same or pool
        return r.choice(pool)

    # ------------------------------------------------------------------ tool side
    def on_tool_call(self, name: str) -> None:
        self.events.append({"kind": "tool", "name": name, "form": None})

    def _pick_tool(self, name: str, occ: int, kwargs: dict[str, Any]) -> FaultSpec | None:
        """A tool fault starts at the nth call of its tool and then follows that same request (retries)."""
        for spec in self.plan.faults:
            if spec.form not in TOOL_BY_NAME or spec.used >= spec.count:
                continue
            if spec.tool is not None and spec.tool != name:
                continue
            if spec.started:
                if kwargs != spec.params.get("_args"):
                    continue
            elif occ < spec.nth:
                continue
            spec.started = True
            spec.params.setdefault("_args", dict(kwargs))
            spec.used += 1
            return spec
        return None

    def tool_fns(self) -> dict[str, Any]:
        fns = {}
        for name, real in self.real_tools.items():
            fns[name] = self._make_tool(name, real)
        return fns

    def _make_tool(self, name: str, real: Any) -> Any:
        run = self

        def tool_fn(**kwargs: Any) -> Any:
            ev = len(run.events) - 1
            occ = run.tool_occ.get(name, 0)
            run.tool_occ[name] = occ + 1
            spec = run._pick_tool(name, occ, kwargs)
            if spec is None:
                try:
                    return json.dumps(real(**kwargs), ensure_ascii=False)
                except ToolFailure as e:
                    return native_error(name, str(e))
            run._mark(ev, spec)
            f = spec.f
            result = None
            if name in NONIDEM and not f.executes:
                inspect.signature(real).bind(**kwargs)
            else:
                try:
                    result = real(**kwargs)
                except ToolFailure:
                    result = None
            tc = SimpleNamespace(
                tool=name,
                args=kwargs,
                real=result,
                text=json.dumps(result, ensure_ascii=False) if result is not None else "",
                rng=random.Random(f"{run.seed}:{run.task_id}:{ev}"),
                params=spec.params,
                world=run.world,
            )
            return f.render(tc)

        tool_fn.__name__ = name
        tool_fn.__doc__ = real.__doc__
        return tool_fn

    # ------------------------------------------------------------------ the episode
    def client(self) -> tuple[openai.OpenAI, httpx2.Client]:
        base = self.provider.url
        if self.plan.gateway:
            self.gw = Provider()
            self.gw.current = self
            base = self.gw.url
        hc = httpx2.Client(
            event_hooks={"request": [self.on_llm_attempt]}, timeout=httpx2.Timeout(self.client_timeout, connect=2.0)
        )
        key = {"azure": "3f9c2b7a1e0d4c58b6a2e9f07d13c4b1", "gemini": "AIzaSyD-blind-round1-local-key"}.get(
            self.vendor, "sk-blind-round1-local"
        )
        client = openai.OpenAI(
            base_url=base, api_key=key, max_retries=self.plan.max_retries, http_client=hc, timeout=self.client_timeout
        )
        return client, hc

    def execute(self, wrapped_tools: dict[str, Any]) -> Outcome:
        client, hc = self.client()
        try:
            names = TASK_TOOLS[self.task.kind]
            schemas = [t for t in TOOL_SCHEMAS if t["function"]["name"] in names]
            tools = {n: wrapped_tools[n] for n in names}
            return run_agent(
                client,
                self.plan.model,
                self.task.prompt(),
                tools,
                schemas=schemas,
                stream=self.plan.stream,
                max_turns=self.plan.max_turns,
                deadline=self.plan.deadline,
                json_answer=self.task.json_answer,
                on_tool_call=self.on_tool_call,
                before_llm_call=self.before_llm_call,
            )
        finally:
            hc.close()
            if self.gw is not None and not self.gateway_down:
                self.gw.stop()

    def close(self) -> None:
        if self.gw is not None and self.gateway_down is None:
            try:
                self.gw.stop()
            except Exception:  # noqa: BLE001
                pass


def native_error(tool: str, message: str) -> str:
    """How each backend reports a genuine failure (an id that does not exist)."""
    if tool == "lookup_order":
        return json.dumps({"error": {"code": "ORDER_NOT_FOUND", "message": message}})
    if tool == "get_customer":
        return json.dumps({"error": "NotFound", "message": message})
    if tool in ("check_inventory",):
        return json.dumps({"error": {"code": 404, "message": message}})
    return json.dumps({"error": {"type": "not_found", "message": message}})
