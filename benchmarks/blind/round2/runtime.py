"""Per-episode runtime shared by the model servers, the MCP server and the agent: the world, the scenario's
faults, and the log of steps in the order they happened (one entry per model HTTP attempt and per tool call).

The step log is what the labels' step numbers come from; it is checked against the trace store after the run.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .forms import FORMS, Form
from .world import World

REGISTRY: dict[str, EpisodeRuntime] = {}
_LOCK = threading.Lock()


@dataclass
class ToolPlan:
    name: str
    args: dict[str, Any]
    occ: int
    fault: dict[str, Any] | None
    form: Form | None


@dataclass
class EpisodeRuntime:
    spec: dict[str, Any]
    world: World
    events: list[dict[str, Any]] = field(default_factory=list)
    llm_attempts: Counter = field(default_factory=Counter)
    tool_counts: Counter = field(default_factory=Counter)
    delivered: dict[int, dict[str, Any]] = field(default_factory=dict)
    bound: dict[str, int] = field(default_factory=dict)       # fault id -> the turn it binds to
    last_body: dict[str, Any] | None = None                   # the last delivered response (for replays)
    pending: ToolPlan | None = None                           # the MCP call in flight
    fired: Counter = field(default_factory=Counter)

    # ------------------------------------------------------------------ model side
    def begin_llm(self, turn: int, action_key: str) -> tuple[int, dict[str, Any] | None]:
        with _LOCK:
            attempt = self.llm_attempts[turn]
            self.llm_attempts[turn] += 1
            chosen = None
            for f in self.spec.get("llm_faults", []):
                on = f["on"]
                match = (on.get("turn") == turn) if "turn" in on else (on.get("action") == action_key)
                if not match:
                    continue
                fid = f["id"]
                if fid not in self.bound:
                    self.bound[fid] = turn
                if self.bound[fid] != turn:
                    continue
                atts = f.get("attempts", [0])
                if atts == "all" or attempt in atts:
                    chosen = f
                    break
            ev = {"kind": "llm", "turn": turn, "attempt": attempt, "action": action_key,
                  "fault": chosen["id"] if chosen else None}
            self.events.append(ev)
            if chosen:
                self.fired[chosen["id"]] += 1
            return attempt, chosen

    # ------------------------------------------------------------------ tool side
    def begin_tool(self, name: str, args: dict[str, Any], transport: str) -> ToolPlan:
        with _LOCK:
            self.tool_counts[name] += 1
            occ = self.tool_counts[name]
            chosen = None
            for f in self.spec.get("tool_faults", []):
                if f["tool"] == name and (f["occ"] == occ or f.get("occ") == "all"):
                    chosen = f
                    break
            self.events.append({"kind": "tool", "name": name, "occ": occ, "transport": transport,
                                "fault": chosen["id"] if chosen else None})
            if chosen:
                self.fired[chosen["id"]] += 1
            return ToolPlan(name, dict(args), occ, chosen, FORMS[chosen["form"]] if chosen else None)


# ---------------------------------------------------------------------- tool answers
_EXC_CACHE: dict[tuple[str, str], type] = {}


def exc_class(module: str, name: str) -> type:
    if module == "builtins":
        return getattr(__import__("builtins"), name)
    key = (module, name)
    if key not in _EXC_CACHE:
        _EXC_CACHE[key] = type(name, (Exception,), {"__module__": module})
    return _EXC_CACHE[key]


def fill(text: str, plan: ToolPlan, world: World, rid: str) -> str:
    args = plan.args
    svc = str(args.get("service") or next(iter(world.services)))
    alert = str(args.get("alert_name") or (world.alerts[0]["name"] if world.alerts else "HighErrorRate"))
    handle = str(args.get("handle") or "@oncall")
    return (text.replace("{svc}", svc).replace("{alert}", alert).replace("{handle}", handle)
            .replace("{rid}", rid).replace("{n}", str(plan.occ * 7 % 100).zfill(2)))


def form_text(form: Form, plan: ToolPlan, world: World, rid: str) -> str:
    if "json" in form.params:
        return fill(json.dumps(form.params["json"]), plan, world, rid)
    return fill(form.params["text"], plan, world, rid)


def _camel(k: str) -> str:
    parts = k.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def _proto3(v: Any) -> Any:
    if isinstance(v, dict):
        return {_camel(k): _proto3(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_proto3(x) for x in v]
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return str(v)
    return v


V2 = {
    "get_service_status": {"service": "svc", "region": "loc", "replicas": "replica_count", "error_rate": "err_pct",
                           "p99_ms": "latency_p99", "version": "ver", "healthy": "state"},
    "query_metrics": {"avg": "mean", "points": "samples", "window_minutes": "window", "unit": "units"},
    "get_oncall": {"primary": "on_call", "secondary": "backup"},
    "get_runbook": {"action": "remediation", "steps": "procedure"},
}


def _v2(name: str, data: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in data.items():
        nk = V2.get(name, {}).get(k, k)
        if k == "healthy":
            v = "ok" if v else "degraded"
        elif k == "error_rate" and isinstance(v, (int, float)):
            v = f"{v * 100:.2f}"
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            v = str(v)
        elif isinstance(v, dict):
            v = {("slack_handle" if kk == "handle" else kk): vv for kk, vv in v.items()}
        out[nk] = v
    return out


def _list_key(data: dict[str, Any]) -> str | None:
    for k in ("alerts", "hits"):
        if isinstance(data.get(k), list):
            return k
    return None


def transform(kind: str, plan: ToolPlan, world: World, result: Any) -> str:
    """A data-shape fault applied to a real result (the tool ran)."""
    name = plan.name
    text = json.dumps(result)
    data = copy.deepcopy(result)
    if kind == "null":
        return "null"
    if kind == "empty_obj":
        return "{}"
    if kind == "empty_list":
        return "[]"
    if kind == "empty_str":
        return ""
    if kind == "prom_empty":
        return json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}})
    if kind == "cut":
        return text[: max(8, int(len(text) * 0.55))]
    if kind == "unbalanced":
        return text[:-1] + ', "meta": {"source": "replica-2", "lag_ms": 40}}}'
    if kind in ("es_partial", "incomplete", "half_list", "k8s_continue", "csv_partial") and isinstance(data, dict):
        key = _list_key(data)
        items = data.get(key, []) if key else []
        keep = max(1, len(items) // 2) if len(items) > 1 else 0
        part = items[:keep]
        if kind == "csv_partial":
            cols = list(items[0].keys()) if items else ["id"]
            rows = [",".join(cols)] + [",".join(str(it.get(c, "")) for c in cols) for it in part]
            rows.append(f"# export truncated: row limit reached ({len(part)} of {len(items)} rows)")
            return "\n".join(rows) + "\n"
        data[key] = part
        if kind == "es_partial":
            data["total"] = len(part)
            data["timed_out"] = True
            data["_shards"] = {"total": 6, "successful": 4, "skipped": 0, "failed": 2}
        elif kind == "incomplete":
            data["total"] = len(part)
            data["incomplete_results"] = True
        elif kind == "k8s_continue":
            data["total"] = len(part)
            data["metadata"] = {"continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTk4NzQsInN0YXJ0IjoiYWxyLTQifQ",
                                "remainingItemCount": len(items) - len(part)}
        return json.dumps(data)
    if kind == "proto3":
        return json.dumps(_proto3(data))
    if kind == "v2rename" and isinstance(data, dict):
        return json.dumps(_v2(name, data))
    if kind == "roster_lag" and isinstance(data, dict):
        others = [r for t, r in sorted(world.oncall.items()) if r["primary"]["handle"] != data["primary"]["handle"]]
        data["primary"] = dict(others[0]["secondary"]) if others else data["secondary"]
        return json.dumps(data)
    if kind == "swap_roster" and isinstance(data, dict):
        data["primary"], data["secondary"] = data["secondary"], data["primary"]
        return json.dumps(data)
    if kind == "shift_numbers" and isinstance(data, dict):
        f = 1.0 + 0.03 + (plan.occ % 5) * 0.013
        data["avg"] = round(data["avg"] * f, 6)
        data["points"] = [round(p * f, 6) for p in data.get("points", [])]
        return json.dumps(data)
    if kind == "stale_healthy" and isinstance(data, dict):
        data.update({"healthy": True, "error_rate": 0.0031, "p99_ms": 184.0})
        return json.dumps(data)
    if kind == "version_shift" and isinstance(data, dict):
        def bump(m: re.Match) -> str:
            return f"v{m.group(1)}.{m.group(2)}.{int(m.group(3)) + 1}"
        for h in data.get("hits", []):
            h["msg"] = re.sub(r"v(\d+)\.(\d+)\.(\d+)", bump, h["msg"])
        return json.dumps(data)
    if kind == "runbook_swap" and isinstance(data, dict):
        other = {"restart": "scale", "scale": "restart", "rollback": "restart"}[data["action"]]
        alt = next(rb for rb in world.runbooks.values() if rb["action"] == other)
        return json.dumps(alt)
    return text


def register(rt: EpisodeRuntime) -> None:
    REGISTRY[rt.spec["task_id"]] = rt


def unregister(task_id: str) -> None:
    REGISTRY.pop(task_id, None)
