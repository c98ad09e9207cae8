"""One episode's shared state: its world, its scripted model, its fault schedule and its step log.

The loopback model server, the MCP server and the agent loop all run in this process, so they
meet here (keyed by the episode's task id) instead of passing the schedule over the wire. The step
log counts what the store numbers: every model request attempt (SDK retries included) and every
tool call, in the order they started.
"""

from __future__ import annotations

import hashlib
import json
import string
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .forms import Form
from .model import ScriptedModel
from .world import SERVICES, Task, World


@dataclass
class FaultSpec:
    form: Form
    turn: int = -1                  # model side: which request of the conversation (0-based turn)
    tool: str = ""                  # tool side: which tool, and from which of its calls
    occurrence: int = 0
    repeats: int = 1                # consecutive attempts / calls that get it
    applied: bool = False           # a write the backend carried out although the agent is shown an error


@dataclass
class Runtime:
    task_id: str
    world: World
    task: Task
    model: ScriptedModel
    specs: list[FaultSpec]
    provider: str
    stream_choice: list[bool] = field(default_factory=list)
    steps: list[tuple[int, str, str]] = field(default_factory=list)
    firings: list[tuple[int, int]] = field(default_factory=list)       # (spec index, step)
    tool_counts: Counter[str] = field(default_factory=Counter)
    turn_attempts: Counter[int] = field(default_factory=Counter)
    last_reply: Any = None
    timeout: float = 30.0           # the client's per-call timeout (the user's setting)
    max_retries: int = 2            # the SDK's retries (the user's setting)
    deadline: float = 60.0          # the desk's budget for one ticket, seconds
    slow_turn: int = -1             # a slow reply that is no fault: waited out
    slow_s: float = 0.0
    current_step: int = -1          # the tool call in flight (the MCP server reads it)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_step(self, kind: str, name: str) -> int:
        with self.lock:
            step = len(self.steps)
            self.steps.append((step, kind, name))
            return step

    def stream_for(self, turn: int) -> bool:
        for spec in self.specs:
            if spec.form.side == "llm" and spec.turn == turn:
                if spec.form.mech in ("cut", "stream_error"):
                    return True
                if spec.form.mech == "body200":
                    return False
        return self.stream_choice[turn % len(self.stream_choice)]

    def llm_fault(self, turn: int, step: int) -> FaultSpec | None:
        attempt = self.turn_attempts[turn]
        self.turn_attempts[turn] += 1
        for i, spec in enumerate(self.specs):
            if spec.form.side == "llm" and spec.turn == turn and attempt < spec.repeats:
                self.firings.append((i, step))
                return spec
        return None

    def tool_fault(self, tool: str, step: int) -> FaultSpec | None:
        occ = self.tool_counts[tool]
        self.tool_counts[tool] += 1
        for i, spec in enumerate(self.specs):
            hit = spec.occurrence <= occ < spec.occurrence + spec.repeats
            if spec.form.side == "tool" and spec.tool == tool and hit:
                self.firings.append((i, step))
                return spec
        return None

    def rid(self, step: int) -> str:
        return hashlib.sha256(f"{self.task_id}/{step}".encode()).hexdigest()[:24]


REGISTRY: dict[str, Runtime] = {}


# ---- what a faulted tool call shows the agent ---------------------------------------------------
def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.title() for p in rest)


def _rename(value: Any, fn: Any) -> Any:
    if isinstance(value, dict):
        return {fn(k): _rename(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, fn) for v in value]
    return value


def _stringify(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stringify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stringify(v) for v in value]
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _neighbour(world: World, field_: str, value: Any) -> Any:
    if field_ in ("email", "requester_email", "phone"):
        col = 3 if field_ == "phone" else 2
        vals = [c[col] for c in world.customers]
        return vals[(vals.index(value) + 1) % len(vals)] if value in vals else value
    if field_ == "order_id":
        ids = [r[0] for r in world.q("select id from orders order by id")]
        return ids[(ids.index(value) + 1) % len(ids)] if value in ids else value
    if field_ == "service":
        return SERVICES[(SERVICES.index(value) + 1) % len(SERVICES)] if value in SERVICES else value
    if field_ == "article_id":
        return f"KB-{int(str(value)[3:]) + 1}"
    return value


def wanted_topic(rt: Runtime, query: str) -> str | None:
    q = query.replace(" ", "-")
    for topic in ("refund-damaged", "outage-runbook", "service-credit"):
        if topic.split("-")[0] in q:
            return topic
    return q


def tool_view(rt: Runtime, spec: FaultSpec, tool: str, args: dict[str, Any], real: str, step: int) -> tuple[str, bool]:
    """The text the agent is shown for a faulted call, and whether it is an error result."""
    form = spec.form
    o = form.opts
    if form.mech == "text":
        first = next(iter(args.values()), "") if args else ""
        return string.Template(form.payload).safe_substitute(rid=rt.rid(step), arg=first), True
    if form.mech == "empty":
        return str(o["value"]), False
    if form.mech == "malformed":
        if o["how"] == "cut":
            return real[: max(8, int(len(real) * 0.55))], False
        return real.rstrip()[:-1], False
    value = json.loads(real)
    if form.mech == "wrong_value":
        f = o["field"]
        if tool == "search_kb":
            want = wanted_topic(rt, args.get("query", ""))
            for hit in value["hits"]:
                if hit["topic"] == want or want is None:
                    hit["article_id"] = _neighbour(rt.world, "article_id", hit["article_id"])
        elif f in value:
            if o["how"] == "shift":
                value[f] = value[f] + 1 if f == "months_affected" else int(value[f] * 1.07)
            elif o["how"] == "tier":
                value[f] = "business" if value[f] == "enterprise" else "enterprise"
            else:
                value[f] = _neighbour(rt.world, f, value[f])
        return json.dumps(value, ensure_ascii=False), False
    if form.mech == "key_rename":
        style = o["style"]
        if style == "sf":
            value = _rename(value, lambda k: "".join(p.title() for p in k.split("_")) + "__c")
        elif style == "camel":
            value = _rename(value, _camel)
        elif style == "hs":
            value = {"id": value.get("customer_id"), "properties": {k: v for k, v in value.items()},
                     "createdAt": "2024-03-01T10:00:00Z", "archived": False}
            value["properties"] = _rename(value["properties"], lambda k: "hs_" + k if k != "email" else "email")
        elif style == "results":
            value = {"found": value["total"], "results": value["hits"], "request_params": {"q": value["query"]}}
        else:
            value = _stringify(_rename(value, lambda k: "".join(p.title() for p in k.split("_"))))
        return json.dumps(value, ensure_ascii=False), False
    if form.mech == "truncated":
        how = o["how"]
        if tool == "search_kb":
            want = wanted_topic(rt, args.get("query", ""))
            hits = value["hits"]
            idx = next((i for i, h in enumerate(hits) if h["topic"] == want), len(hits))
            kept = hits[:idx] if idx > 0 else [h for h in hits if h["topic"] != want][:2]
            total = max(len(hits), len(kept) + 3)
            if how == "es":
                value = {"took": 5012, "timed_out": True, "_shards": {"total": 5, "successful": 3, "skipped": 0,
                                                                      "failed": 2},
                         "hits": {"total": {"value": total, "relation": "eq"}, "hits": kept}}
            elif how == "typesense":
                value = {"found": total, "out_of": 14, "page": 1, "search_cutoff": True, "search_time_ms": 21,
                         "hits": kept, "query": value["query"]}
            else:
                value = {"query": value["query"], "total": total, "hits": kept}
            return json.dumps(value, ensure_ascii=False), False
        if how == "half":
            keys = list(value)
            return json.dumps({k: value[k] for k in keys[: len(keys) // 2]}, ensure_ascii=False), False
        text = json.dumps(value, ensure_ascii=False, indent=1)
        return text[: len(text) // 3] + f"\n... [output truncated: {len(text) // 3} of {len(text)} bytes shown]", False
    raise ValueError(form.mech)
