"""The scripted model behind the loopback provider.

Per episode it holds a task (see world.py) and a small behaviour config. On every request it
reads the tool results it has not seen yet, updates what it knows, and decides the next turn:
more tool calls, or the final answer. Rules (documented in README.md):

* A result is read the way a careful but literal reader would: JSON is parsed; if parsing fails
  the needed fields are searched for in the raw text (a half-cut JSON can still be read if the
  fields came before the cut). Anything that looks like an error (an error member, a status
  object, an XML fault, a traceback, an exception repr, a plain "Error:" line, ``ok: false``,
  ``isError: true``) is a failed call. ``[]``, ``{}``, ``""``, ``null`` are "no data".
* Fields are looked up by their documented names, ignoring case and underscores (so camelCase
  renames are understood). If a documented number is absent but the object is clearly the
  right entity, the model takes the first other number in it (a common slip that turns a
  renamed field into a wrong value). A missing string field fails the call.
* Flags such as ``partial``, ``timed_out``, ``incomplete_results`` are not noticed: the data
  present is used as if complete. Among search hits the exact name match wins, else the top hit.
* Ids in results are not cross-checked against the request.
* A failed call is retried (same arguments) up to ``retries`` times; then the model gives up with
  a short apology naming the failing tool, or, on aggregate tasks with ``on_fail="skip"``, skips
  the item and reports the others.
* ``slip`` injects one mistake of the model's own (wrong id, missing argument, bad JSON, unknown
  tool, arithmetic, answering without data, prose instead of JSON, a repeated non-idempotent
  call, a silent skip, a loop).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from .world import Item, Task


@dataclass
class ModelCfg:
    retries: int = 1
    on_fail: str = "give_up"  # or "skip" (aggregate tasks only)
    slip: dict[str, Any] | None = None  # {"kind": ..., "item": key-prefix or None}
    chatty: bool = False  # say a short sentence alongside tool calls


@dataclass
class Action:
    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"id", "name", "arguments"}
    items: list[str] = field(default_factory=list)  # item keys of the calls

    @property
    def is_final(self) -> bool:
        return not self.tool_calls


class Missing(Exception):
    pass


def _norm(k: str) -> str:
    return k.replace("_", "").replace("-", "").lower()


def _get(obj: Any, key: str) -> Any:
    if not isinstance(obj, dict):
        raise Missing(key)
    if key in obj:
        return obj[key]
    nk = _norm(key)
    for k, v in obj.items():
        if _norm(k) == nk:
            return v
    raise Missing(key)


def _num(v: Any) -> float:
    if isinstance(v, bool):
        raise Missing("bool")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.replace(",", ""))
        except ValueError:
            raise Missing(v) from None
    raise Missing(repr(v))


def looks_like_error(obj: Any) -> str | None:
    """The error the object reports, as a short text, or None."""
    if isinstance(obj, dict):
        if obj.get("isError") is True:
            return "tool reported isError"
        if obj.get("ok") is False:
            return f"ok=false ({obj.get('error')})"
        if obj.get("kind") == "Status" and obj.get("status") == "Failure":
            return f"{obj.get('reason')}: {obj.get('message')}"
        for k in ("error", "errors", "fault", "Fault", "__type", "Error", "errorMessage", "detail"):
            if obj.get(k):
                return f"{k}: {str(obj[k])[:160]}"
        if str(obj.get("status", "")).lower() in {"throttled", "error", "failed", "failure", "unavailable", "timeout"}:
            return f"status={obj['status']}"
        if "code" in obj and "message" in obj and len(obj) <= 4:
            return f"{obj['code']}: {obj['message']}"
    return None


def read_result(item: Item, text: str) -> dict[str, Any]:
    """Facts the model takes from a tool result, or raises Missing(reason) for a failed call."""
    t = (text or "").strip()
    if t in ("", "null", "[]", "{}", '""', "None"):
        raise Missing("the tool returned no data")
    try:
        obj = json.loads(t)
    except ValueError:
        obj = None
    if obj is None:
        # not JSON: an error text, or JSON cut part-way that may still hold the fields
        if not t.startswith(("{", "[")):
            raise Missing(t.splitlines()[0][:160])
        facts = {}
        for fact, path, kind in item.reads:
            leaf = path.split(".")[-1]
            m = re.search(rf'"{re.escape(leaf)}"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)(?=\s*[,}}\]])', t)
            if not m:
                raise Missing(f"response unreadable (no {leaf})")
            raw = m.group(1)
            facts[fact] = json.loads(raw) if raw.startswith('"') else float(raw)
            if kind == "num":
                facts[fact] = _num(facts[fact])
        return facts
    if isinstance(obj, str):
        if not obj.strip():
            raise Missing("the tool returned no data")
        raise Missing(obj[:160])
    if isinstance(obj, list):
        if not obj:
            raise Missing("the tool returned no data")
        err = looks_like_error(obj[0])
        raise Missing(err or "unexpected list")
    err = looks_like_error(obj)
    if err:
        raise Missing(err)
    if not obj:
        raise Missing("the tool returned no data")
    facts: dict[str, Any] = {}
    for fact, path, kind in item.reads:
        if kind == "hits":
            try:
                hits = _get(_get(obj, "hits"), "hits")
            except Missing:
                raise Missing("no search hits in the response") from None
            if not hits:
                raise Missing("the search found no products")
            want = item.args.get("query", "").lower()
            pick = next((h for h in hits if str(h.get("_source", {}).get("name", "")).lower() == want), hits[0])
            facts[fact] = pick.get("_source", {}).get("sku") or pick.get("_id")
            continue
        if kind == "etas":
            try:
                items = _get(obj, "items")
            except Missing:
                raise Missing("no shipments in the response") from None
            if not items:
                raise Missing("the order has no shipments listed")
            etas = []
            for s in items:
                try:
                    etas.append(str(_get(s, "eta")))
                except Missing:
                    pass
            if not etas:
                raise Missing("shipments without eta")
            facts[fact] = etas
            continue
        try:
            v = _get(obj, path)
        except Missing:
            if kind == "num" and item.entity_key and _has(obj, item.entity_key):
                nums = [
                    x
                    for k, x in obj.items()
                    if isinstance(x, (int, float)) and not isinstance(x, bool) and not _norm(k).endswith("id")
                ]
                if nums:
                    facts[fact] = float(nums[0])
                    continue
            raise Missing(f"the response has no {path}") from None
        if kind == "num":
            facts[fact] = _num(v)
        else:
            if v is None or v == "":
                raise Missing(f"{path} is empty")
            facts[fact] = str(v)
    return facts


def _has(obj: dict[str, Any], key: str) -> bool:
    try:
        _get(obj, key)
        return True
    except Missing:
        return False


def _swap_digits(s: str) -> str:
    m = re.search(r"(\d)(\d)(?!.*\d\d)", s)
    if not m or m.group(1) == m.group(2):
        return s[:-1] + str((int(s[-1]) + 3) % 10)
    i = m.start()
    return s[:i] + s[i + 1] + s[i] + s[i + 2 :]


class ScriptedModel:
    def __init__(self, task: Task, cfg: ModelCfg, tag: str) -> None:
        self.task, self.cfg, self.tag = task, cfg, tag
        self.facts: dict[str, Any] = {}
        self.settled: set[str] = set()
        self.skipped: list[str] = []
        self.attempts: dict[str, int] = {}
        self.issued: dict[str, Item] = {}
        self.seen: set[str] = set()
        self.pending_retry: list[Item] | None = None
        self.gave_up: str | None = None
        self.turns: dict[int, Action] = {}
        self.slip_done = False
        self.loop_item: Item | None = None

    # ------------------------------------------------------------------ reading the conversation
    def ingest(self, messages: list[dict[str, Any]]) -> None:
        for m in messages:
            if m.get("role") != "tool":
                continue
            cid = m.get("tool_call_id")
            if cid in self.seen:
                continue
            self.seen.add(cid)
            item = self.issued.get(cid)
            if item is None or self.gave_up is not None:
                continue
            content = m.get("content")
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            try:
                facts = read_result(item, str(content))
            except Missing as e:
                self._failed(item, str(e))
                continue
            self.facts.update(facts)
            self.settled.add(item.key)
            if self.pending_retry and item.key in [i.key for i in self.pending_retry]:
                self.pending_retry = [i for i in self.pending_retry if i.key != item.key] or None

    def _failed(self, item: Item, reason: str) -> None:
        if self.cfg.slip and self.cfg.slip.get("kind") == "loop":
            return
        n = self.attempts.get(item.key, 0) + 1
        self.attempts[item.key] = n
        if n <= self.cfg.retries:
            self.pending_retry = (self.pending_retry or []) + [item]
            return
        if self.pending_retry:
            self.pending_retry = [i for i in self.pending_retry if i.key != item.key] or None
        if self.task.aggregate and self.cfg.on_fail == "skip":
            self.settled.add(item.key)
            self.skipped.append(item.key)
            return
        self.gave_up = f"I'm sorry, I couldn't finish this: the {item.tool} call failed ({reason[:140]})."

    # ------------------------------------------------------------------ deciding the next turn
    def decide(self, messages: list[dict[str, Any]]) -> Action:
        self.ingest(messages)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if turn in self.turns:
            return self.turns[turn]
        act = self._next(turn)
        self.turns[turn] = act
        return act

    def _cid(self, turn: int, k: int) -> str:
        h = hashlib.sha256(f"{self.tag}:{turn}:{k}".encode()).hexdigest()
        return "call_" + h[:24]

    def _calls(self, turn: int, items: list[Item]) -> Action:
        calls, keys = [], []
        for k, it in enumerate(items):
            cid = self._cid(turn, k)
            self.issued[cid] = it
            name, args, raw = it.tool, dict(it.args), None
            slip = self.cfg.slip
            if slip and not self.slip_done and (slip.get("item") is None or it.key.startswith(slip["item"])):
                kind = slip["kind"]
                if kind == "wrong_id":
                    for a in ("order_id", "customer_id", "sku"):
                        if a in args:
                            args[a] = _swap_digits(args[a])
                            break
                    self.slip_done = True
                elif kind == "missing_arg":
                    args.pop(next(iter(args)))
                    self.slip_done = True
                elif kind == "bad_json":
                    raw = "{" + ", ".join(f"'{a}': '{v}'" for a, v in args.items()) + "}"
                    self.slip_done = True
                elif kind == "unknown_tool":
                    name = {
                        "lookup_order": "get_order",
                        "get_customer": "fetch_customer",
                        "check_inventory": "get_stock",
                        "list_shipments": "track_order",
                        "get_invoice": "fetch_invoice",
                    }.get(name, name + "_v2")
                    self.slip_done = True
            calls.append(
                {"id": cid, "name": name, "arguments": raw if raw is not None else json.dumps(args, ensure_ascii=False)}
            )
            keys.append(it.key)
        slip = self.cfg.slip
        if slip and slip["kind"] == "dup_call" and not self.slip_done and items and items[0].tool == slip.get("tool"):
            cid = self._cid(turn, len(calls))
            self.issued[cid] = items[0]
            calls.append({"id": cid, "name": calls[0]["name"], "arguments": calls[0]["arguments"]})
            keys.append(items[0].key)
            self.slip_done = True
        text = None
        if self.cfg.chatty:
            text = "Let me check that." if turn == 0 else "Checking the next record."
        return Action(text, calls, keys)

    def _next(self, turn: int) -> Action:
        slip = self.cfg.slip or {}
        if slip.get("kind") == "premature" and turn == 0:
            return Action(self._invent_answer())
        if self.gave_up is not None:
            return Action(self.gave_up)
        if slip.get("kind") == "loop":
            if self.loop_item is None:
                self.loop_item = (self.task.next_items(self.facts, self.settled) or [None])[0]
            if self.loop_item is not None:
                return self._calls(turn, [self.loop_item])
        if self.pending_retry:
            items = list(self.pending_retry)
            self.pending_retry = None
            return self._calls(turn, items)
        items = self.task.next_items(self.facts, self.settled)
        if (
            slip.get("kind") == "skip_item"
            and items
            and not self.slip_done
            and items[0].key.startswith(slip.get("item") or "")
        ):
            self.settled.add(items[0].key)
            self.slip_done = True
            items = self.task.next_items(self.facts, self.settled)
        if items:
            return self._calls(turn, items)
        ans = self.task.answer(self.facts, self.skipped)
        if ans is None:
            return Action("I'm sorry, I couldn't find the information needed to answer this.")
        if slip.get("kind") == "arith":
            ans = self._arith(ans)
        if slip.get("kind") == "prose" and self.task.json_answer:
            obj = json.loads(ans)
            ans = f"The order {obj['order_id']} totals about {obj['total_eur']:.2f} euros."
        return Action(ans)

    def _arith(self, ans: str) -> str:
        f = self.facts
        t = self.task
        if t.kind == "order_total_eur" and "total" in f and "rate" in f:
            v = round(f["total"] / f["rate"], 2)
            return ans.replace(f"{round(f['total'] * f['rate'], 2):,.2f}", f"{v:,.2f}").replace(
                str(round(f["total"] * f["rate"], 2)), str(v)
            )
        if t.kind in ("stock", "stock_sweep"):
            # forgot to subtract the reserved units
            tot = sum(v for k, v in f.items() if k.startswith("on_hand:"))
            return re.sub(r"\d+ units", f"{int(tot)} units", ans, count=1)
        if t.kind == "audit_totals":
            s = sum(v for k, v in f.items() if k.startswith("total:"))
            return re.sub(r"up to [\d,]+\.\d\d", f"up to {s + 100:,.2f}", ans)
        return ans + " (approximately)"

    def _invent_answer(self) -> str:
        t = self.task
        if t.kind == "order_total_eur":
            return f"Order {t.order_id} comes to roughly 250.00 EUR."
        if t.kind == "eta":
            return f"The last parcel of {t.order_id} should arrive within about a week."
        return "Based on the information available, everything looks in order."
