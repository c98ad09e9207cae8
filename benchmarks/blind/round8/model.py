"""The SIMULATED model: a scripted support agent that decides its tool calls from the conversation.

It reads each tool result the way a model would: a JSON object with the fields it needs is used as
it is (a wrong value is not noticed), anything else (an error text, a missing field, broken JSON,
an empty answer) is a failed call, which it retries with the same arguments, skips, or gives up on,
as the episode's persona says. Its own slips (a wrong amount, broken arguments, an unknown tool,
giving up early, forgetting a step) come from the persona too, so every choice is seeded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .world import Task

NEEDS: dict[str, tuple[str, ...]] = {
    "get_ticket": ("ticket_id", "requester_email"), "get_customer": ("customer_id", "email", "phone", "tier"),
    "lookup_order": ("order_id", "total_cents"), "get_subscription": ("monthly_cents",),
    "search_kb": ("hits",), "issue_refund": ("refund_id",), "apply_credit": ("credit_note_id",),
    "send_email": ("message_id",), "send_sms": ("sid",), "update_ticket": ("updated",),
    "page_oncall": ("incident_id",), "schedule_csat": ("survey_id",),
}


@dataclass
class Persona:
    """How this episode's model behaves: parallel calls, retries, what it does when a call fails, slips."""

    parallel: bool = True
    retries: int = 0                 # identical re-tries of a failed call before giving up or skipping
    on_fail: str = "give_up"         # give_up | skip
    slip: str = ""                   # own mistake: give_up_at | wrong_amount | bad_json | missing_param |
    slip_slot: str = ""              #   unknown_tool | forget | wrong_status | odd_query (benign)
    slip_turn: int = -1


@dataclass
class Reply:
    content: str | None
    tool_calls: list[tuple[str, str, str]]       # (id, name, arguments as the model wrote them)
    finish_reason: str


@dataclass
class Slot:
    name: str
    tool: str
    build: Callable[[dict[str, Any]], dict[str, Any] | None]
    status: str = "todo"             # todo | issued | ok | failed | skipped
    attempts: int = 0
    args: dict[str, Any] | None = None
    knowledge_key: str = ""


def _usable(tool: str, text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return None
    if not isinstance(value, dict) or not all(k in value for k in NEEDS[tool]):
        return None
    return value


def _ticket_field(k: dict[str, Any], name: str, field_: str) -> Any:
    t = k.get(name)
    return None if not t or field_ not in t else t[field_]


@dataclass
class ScriptedModel:
    task: Task
    persona: Persona
    new_id: Callable[[int, int], str]
    slots: list[list[Slot]] = field(default_factory=list)
    k: dict[str, Any] = field(default_factory=dict)
    issued: dict[str, Slot] = field(default_factory=dict)
    seen: int = 0
    cache: dict[int, Reply] = field(default_factory=dict)
    gave_up: str = ""

    def __post_init__(self) -> None:
        self.slots = self._plan()

    # ---- the task as groups of calls ------------------------------------------------------------
    def _plan(self) -> list[list[Slot]]:
        t = self.task
        p = self.persona
        tid = t.ticket_ids[0]
        if t.kind == "queue":
            groups: list[list[Slot]] = []
            for i, ti in enumerate(t.ticket_ids):
                groups.append([Slot(f"t{i}", "get_ticket", lambda k, ti=ti: {"ticket_id": ti}, knowledge_key=f"t{i}")])
                groups.append([Slot(f"kb{i}", "search_kb", lambda k, i=i: (
                    {"query": _ticket_field(k, f"t{i}", "topic").replace("-", " ")}
                    if _ticket_field(k, f"t{i}", "topic") else None), knowledge_key=f"kb{i}")])
                groups.append([
                    Slot(f"mail{i}", "send_email", lambda k, i=i, ti=ti: self._queue_mail(k, i, ti)),
                    Slot(f"upd{i}", "update_ticket", lambda k, i=i, ti=ti: (
                        {"ticket_id": ti, "status": "solved", "note": f"Answered with {self._article(k, i)}"}
                        if self._article(k, i) else None)),
                ])
            return groups
        ticket = [Slot("t0", "get_ticket", lambda k: {"ticket_id": tid}, knowledge_key="t0")]
        customer = Slot("cust", "get_customer", lambda k: (
            {"email": k["t0"]["requester_email"]} if "t0" in k else None), knowledge_key="cust")
        if t.kind == "refund":
            wanted = "refund-damaged"
            order = Slot("order", "lookup_order", lambda k: (
                {"order_id": k["t0"]["order_id"]} if "order_id" in k.get("t0", {}) else None), knowledge_key="order")
            kb = Slot("kb0", "search_kb", lambda k: {"query": "refund damaged item"}, knowledge_key="kb0")
            refund = Slot("refund", "issue_refund", lambda k: (
                {"order_id": k["order"]["order_id"],
                 "amount_cents": k["order"]["total_cents"] - (599 if p.slip == "wrong_amount" else 0),
                 "reason": f"damaged on arrival ({self._pick(k, 'kb0', wanted)})"}
                if "order" in k and self._pick(k, "kb0", wanted) else None), knowledge_key="refund")
            notify = [
                Slot("mail", "send_email", lambda k: (
                    {"to": k["cust"]["email"], "subject": f"Your refund for {k['order']['order_id']}",
                     "body": f"Hi {k['cust']['name']}, refund {k['refund']['refund_id']} is on its way."}
                    if "cust" in k and "refund" in k else None)),
                Slot("upd", "update_ticket", lambda k: (
                    {"ticket_id": tid, "status": "solved",
                     "note": f"Refunded per {self._pick(k, 'kb0', wanted)}: {k['refund']['refund_id']}"}
                    if "refund" in k else None)),
            ]
            csat = [Slot("csat", "schedule_csat", lambda k: {"ticket_id": tid, "channel": "email"}
                         if "refund" in k else None)]
            groups = [ticket, [customer, order], [kb], [refund], notify, csat]
        elif t.kind == "outage":
            wanted = "outage-runbook"
            kb = Slot("kb0", "search_kb", lambda k: {"query": "outage runbook"}, knowledge_key="kb0")
            page = Slot("page", "page_oncall", lambda k: (
                {"service": k["t0"]["service"], "severity": "SEV1" if k["cust"]["tier"] == "enterprise" else "SEV3",
                 "summary": f"Customer {k['cust']['customer_id']} reports {k['t0']['service']} down ({tid})"}
                if "cust" in k and "service" in k.get("t0", {}) else None), knowledge_key="page")
            notify = [
                Slot("sms", "send_sms", lambda k: (
                    {"phone": k["cust"]["phone"],
                     "body": f"We're on it: incident {k['page']['incident_id']} is open for your outage."}
                    if "page" in k else None)),
                Slot("upd", "update_ticket", lambda k: (
                    {"ticket_id": tid, "status": "wrong" if p.slip == "wrong_status" else "pending",
                     "note": f"Paged {k['page']['incident_id']}; following {self._pick(k, 'kb0', wanted)}"}
                    if "page" in k and self._pick(k, "kb0", wanted) else None)),
            ]
            groups = [ticket, [customer, kb], [page], notify]
        else:
            wanted = "service-credit"
            sub = Slot("sub", "get_subscription", lambda k: (
                {"customer_id": k["cust"]["customer_id"]} if "cust" in k else None), knowledge_key="sub")
            kb = Slot("kb0", "search_kb", lambda k: {"query": "service credit downtime"}, knowledge_key="kb0")
            credit = Slot("credit", "apply_credit", lambda k: (
                {"customer_id": k["cust"]["customer_id"],
                 "amount_cents": k["sub"]["monthly_cents"] * (int(k["t0"].get("months_affected", 1))
                                                             + (1 if p.slip == "wrong_amount" else 0)),
                 "reason": f"downtime credit per {self._pick(k, 'kb0', wanted)}"}
                if "sub" in k and "t0" in k and self._pick(k, "kb0", wanted) else None), knowledge_key="credit")
            notify = [
                Slot("mail", "send_email", lambda k: (
                    {"to": k["cust"]["email"], "subject": "Your service credit",
                     "body": f"Hi {k['cust']['name']}, credit note {k['credit']['credit_note_id']} is applied."}
                    if "credit" in k else None)),
                Slot("upd", "update_ticket", lambda k: (
                    {"ticket_id": tid, "status": "solved",
                     "note": f"Credit {k['credit']['credit_note_id']} per {self._pick(k, 'kb0', wanted)}"}
                    if "credit" in k else None)),
            ]
            csat = [Slot("csat", "schedule_csat", lambda k: {"ticket_id": tid, "channel": "sms"}
                         if "credit" in k else None)]
            groups = [ticket, [customer], [sub, kb], [credit], notify, csat]
        if not p.parallel:
            groups = [[s] for g in groups for s in g]
        return groups

    def _pick(self, k: dict[str, Any], key: str, topic: str) -> str | None:
        for hit in (k.get(key) or {}).get("hits") or []:
            if isinstance(hit, dict) and hit.get("topic") == topic and "article_id" in hit:
                return str(hit["article_id"])
        return None

    def _article(self, k: dict[str, Any], i: int) -> str | None:
        topic = _ticket_field(k, f"t{i}", "topic")
        return self._pick(k, f"kb{i}", topic) if topic else None

    def _queue_mail(self, k: dict[str, Any], i: int, ti: str) -> dict[str, Any] | None:
        art = self._article(k, i)
        if not art:
            return None
        return {"to": k[f"t{i}"]["requester_email"], "subject": f"Re: {ti}",
                "body": f"Hello, regarding {ti}: please follow {art} in our help centre."}

    # ---- reading the conversation ---------------------------------------------------------------
    def _ingest(self, messages: list[dict[str, Any]]) -> list[Slot]:
        batch: list[Slot] = []
        for msg in messages[self.seen:]:
            if msg.get("role") != "tool":
                continue
            slot = self.issued.get(str(msg.get("tool_call_id")))
            if slot is None:
                continue
            text = msg.get("content")
            text = text if isinstance(text, str) else json.dumps(text)
            value = _usable(slot.tool, text)
            if slot.tool == "search_kb" and value is not None and slot.knowledge_key:
                wanted = self._wanted(slot)
                if wanted and not self._pick({"x": value}, "x", wanted):
                    value = None
            if value is None:
                if slot.status != "ok":
                    slot.status = "failed_now"
                    batch.append(slot)
            else:
                slot.status = "ok"
                if slot.knowledge_key:
                    self.k[slot.knowledge_key] = value
        self.seen = len(messages)
        return batch

    def _wanted(self, slot: Slot) -> str | None:
        if self.task.kind == "queue":
            return _ticket_field(self.k, "t" + slot.name[2:], "topic")
        return {"refund": "refund-damaged", "outage": "outage-runbook", "credit": "service-credit"}[self.task.kind]

    def decide(self, messages: list[dict[str, Any]]) -> Reply:
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if turn in self.cache:
            return self.cache[turn]
        reply = self._decide(messages, turn)
        self.cache[turn] = reply
        return reply

    def _decide(self, messages: list[dict[str, Any]], turn: int) -> Reply:
        p = self.persona
        failed = self._ingest(messages)
        for slot in failed:
            if slot.attempts <= p.retries and not (p.slip == "odd_query" and slot.name == p.slip_slot):
                slot.status = "todo"          # the same call again
            elif p.slip == "odd_query" and slot.name == p.slip_slot and slot.attempts == 1:
                slot.status = "todo"
                slot.args = None              # rephrased below
            elif p.on_fail == "give_up":
                return self._final(f"I could not complete this: the {slot.tool} call failed and I stopped.")
            else:
                slot.status = "failed"
        if p.slip == "give_up_at" and turn >= p.slip_turn and not failed:
            return self._final("I'm not able to finish this ticket right now; leaving it for a human agent.")
        calls: list[tuple[str, str, str]] = []
        for group in self.slots:
            pending = [s for s in group if s.status in ("todo", "issued")]
            if any(s.status == "issued" for s in group):
                pending = []
            for slot in pending:
                if slot.args is None or slot.status == "todo" and slot.attempts == 0:
                    args = slot.build(self.k)
                    if args is None:
                        slot.status = "skipped"
                        continue
                    if slot.name == p.slip_slot and p.slip == "odd_query" and slot.attempts == 0:
                        args = {"query": "kb lookup zq"}
                    slot.args = args
                if p.slip == "forget" and slot.name == p.slip_slot:
                    slot.status = "skipped"
                    continue
                calls.append(self._call(slot, turn, len(calls)))
            if calls:
                break
        if not calls:
            done = all(s.status == "ok" for g in self.slots for s in g)
            if done or p.slip == "forget":
                return self._final(self._summary())
            return self._final("I finished what I could; some steps could not be completed.")
        return Reply(None, calls, "tool_calls")

    def _call(self, slot: Slot, turn: int, index: int) -> tuple[str, str, str]:
        p = self.persona
        call_id = self.new_id(turn, index)
        slot.status = "issued"
        slot.attempts += 1
        self.issued[call_id] = slot
        name = slot.tool
        args = dict(slot.args or {})
        text = json.dumps(args, ensure_ascii=False)
        if slot.name == p.slip_slot:
            if p.slip == "bad_json":
                text = text[:-1] + ",}" if len(text) > 2 else "{,}"
            elif p.slip == "missing_param":
                args.pop(sorted(args)[0])
                text = json.dumps(args, ensure_ascii=False)
            elif p.slip == "unknown_tool":
                name = {"update_ticket": "close_ticket", "send_email": "email_customer"}.get(name, name + "_v2")
        return (call_id, name, text)

    def _summary(self) -> str:
        if self.task.kind == "queue":
            return f"All {len(self.task.ticket_ids)} queue tickets answered and solved."
        return f"Ticket {self.task.ticket_ids[0]} is handled: every step of the request is done."

    def _final(self, text: str) -> Reply:
        self.gave_up = text
        return Reply(text, [], "stop")
