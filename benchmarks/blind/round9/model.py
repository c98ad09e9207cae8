"""The SIMULATED model: plays the agent's side from the conversation, deterministically.

It re-reads the whole conversation on every request (as a model does): walks the task's items and
their workflows, consumes the tool results in order, takes the values it needs from them (a wrong
value is taken at face value), repeats a call after a bad result as often as its seeded habit
says, gives an item up otherwise, and answers when nothing is left. Its own slips (giving up,
a wrong slot or amount, a left-out argument, an unknown tool, arguments that are not JSON, a loop,
a forgotten message) come from the episode's plan.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from benchmarks.blind.round9.world import Item


@dataclass
class Persona:
    """The model's seeded habits for one episode."""

    retries: dict[tuple[int, str], int] = field(default_factory=dict)
    slip: str = ""
    slip_item: int = 0
    slip_op: str = ""
    parallel_search: bool = False


@dataclass
class Call:
    name: str
    args: dict[str, Any]
    raw: str | None = None  # arguments text when the model writes something other than JSON


@dataclass
class Reply:
    calls: list[Call]
    text: str = ""


def history(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(tool name, result text) for every tool call in the conversation, in order."""
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    out = []
    for m in messages:
        for tc in m.get("tool_calls") or []:
            if tc.get("id") in results:
                content = results[tc["id"]]
                if isinstance(content, list):
                    content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
                out.append((tc["function"]["name"], str(content)))
    return out


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _entries(res: Any) -> list[dict[str, Any]]:
    if not isinstance(res, dict) or not isinstance(res.get("entry"), list):
        raise KeyError("entry")
    return [e["resource"] for e in res["entry"]]


def take(op: str, it: Item, text: str, ctx: dict[str, Any], persona: Persona, n: int) -> bool:
    """Read what ``op`` needs from its result into ``ctx``; False when the result is unusable."""
    res = _json(text)
    try:
        if op == "search_patients":
            for r in _entries(res):
                if r["name"][0]["given"][0] == it.given and r["birthDate"] == it.birth_date:
                    ctx["pid"] = r["id"]
                    return True
            return False
        if op == "get_patient":
            ctx["payer"], ctx["member"] = res["coverage"]["payer_id"], res["coverage"]["member_id"]
            return bool(ctx["payer"])
        if op == "check_eligibility":
            ctx["copay"] = float(res["copay"]["amount"])
            return res["status"] == "active"
        if op == "find_slots":
            slots = _entries(res)
            if not slots:
                return False
            want = f"{it.date}T{it.hour}"
            pick = next((s for s in slots if s["start"].startswith(want)), slots[0])
            if persona.slip == "wrong_slot" and persona.slip_item == n and len(slots) > 1:
                pick = slots[1] if pick is slots[0] else slots[0]
            ctx["slot"] = pick["id"]
            return True
        if op == "book_appointment":
            ctx["start"] = res["start"]
            return res["status"] == "booked"
        if op == "send_patient_message":
            return res["status"] == "queued"
        if op == "charge_copay":
            return res["payment"]["status"] == "COMPLETED"
        if op == "submit_prior_auth":
            ctx["auth"] = res["auth_id"]
            return True
        if op == "create_referral":
            return res["resourceType"] == "ServiceRequest"
        if op == "list_appointments":
            booked = [a for a in _entries(res) if a["status"] == "booked"]
            if not booked:
                return False
            ctx["appt"] = booked[0]["id"]
            return True
        if op == "cancel_appointment":
            return res["status"] == "cancelled"
    except (KeyError, TypeError, IndexError, ValueError, AttributeError):
        return False
    raise ValueError(op)


def build(op: str, it: Item, ctx: dict[str, Any], persona: Persona, n: int) -> Call:
    pid = ctx.get("pid", "")
    slip = persona.slip if (persona.slip_item, persona.slip_op) == (n, op) else ""
    if op == "search_patients":
        return Call(op, {"family": it.family, "given": it.given, "birth_date": it.birth_date})
    if op == "get_patient":
        return Call(op, {"patient_id": pid})
    if op == "check_eligibility":
        return Call(op, {"patient_id": pid, "payer_id": ctx.get("payer", ""), "member_id": ctx.get("member", "")})
    if op == "find_slots":
        return Call(op, {"practitioner_id": it.practitioner_id, "date": it.date})
    if op == "book_appointment":
        if slip == "missing_param":
            return Call(op, {"patient_id": pid, "start": f"{it.date}T{it.hour}"})
        if slip == "unknown_tool":
            return Call("schedule_visit", {"patient_id": pid, "slot_id": ctx.get("slot", "")})
        return Call(op, {"patient_id": pid, "slot_id": ctx.get("slot", "")})
    if op == "send_patient_message":
        start = str(ctx.get("start", ""))
        if it.kind == "schedule":
            body = (f"Hi {it.given}, you are booked on {start[:10]} at {start[11:16]}. Your copay is "
                    f"${ctx.get('copay', 0):.2f}.")
        elif it.kind == "reschedule":
            body = f"Hi {it.given}, your visit has moved to {start[:10]} at {start[11:16]}."
        elif it.kind == "prior_auth":
            body = f"Hi {it.given}, we submitted your prior authorization, reference {ctx.get('auth', '')}."
        else:
            body = f"Hi {it.given}, we sent your referral to {it.specialty}; they will call you."
        if slip == "missing_param":
            return Call(op, {"body": body})
        return Call(op, {"patient_id": pid, "body": body})
    if op == "charge_copay":
        cents = ctx.get("copay", 0.0) * (1 if slip == "dollars" else 100)
        call = Call(op, {"patient_id": pid, "amount_cents": int(round(cents))})
        if slip == "bad_json":
            call.raw = f"{{'patient_id': '{pid}', 'amount_cents': {int(round(cents))}}}"
        return call
    if op == "submit_prior_auth":
        return Call(op, {"patient_id": pid, "cpt_code": it.cpt, "icd10_code": it.icd10})
    if op == "create_referral":
        return Call(op, {"patient_id": pid, "specialty": it.specialty, "reason": "Referral requested by PCP"})
    if op == "list_appointments":
        return Call(op, {"patient_id": pid})
    if op == "cancel_appointment":
        return Call(op, {"appointment_id": ctx.get("appt", "")})
    raise ValueError(op)


def decide(items: list[Item], persona: Persona, messages: list[dict[str, Any]]) -> Reply:
    """The model's next reply given the conversation so far."""
    hist = history(messages)
    pos = 0
    ctx: list[dict[str, Any]] = [{} for _ in items]
    failed: dict[int, str] = {}
    done_first = False
    if persona.parallel_search and len(items) > 1:
        calls = [build("search_patients", it, ctx[n], persona, n) for n, it in enumerate(items)]
        if len(hist) < len(items):
            return Reply(calls, "Looking up all patients first.")
        for n, it in enumerate(items):
            if not take("search_patients", it, hist[pos][1], ctx[n], persona, n):
                failed[n] = "search_patients"
            pos += 1
        done_first = True
    for n, it in enumerate(items):
        if n in failed:
            continue
        for op in it.ops[1 if done_first else 0:]:
            if persona.slip == "forget_message" and persona.slip_item == n and op == "send_patient_message":
                continue
            if persona.slip == "give_up" and (persona.slip_item, persona.slip_op) == (n, op):
                return Reply([], "I wasn't able to finish this request; please handle the rest manually.")
            call = build(op, it, ctx[n], persona, n)
            if persona.slip == "loop" and (persona.slip_item, persona.slip_op) == (n, op):
                return Reply([call], "Checking again.")
            attempts = 0
            while True:
                while pos < len(hist) and hist[pos][0] != call.name:
                    pos += 1  # a repeated call the model did not ask for this time: not noticed
                if pos >= len(hist):
                    return Reply([call])
                text = hist[pos][1]
                pos += 1
                attempts += 1
                if take(op, it, text, ctx[n], persona, n):
                    break
                if attempts <= persona.retries.get((n, op), 0):
                    continue
                failed[n] = op
                break
            if n in failed:
                break
    done = [f"{it.given} {it.family} ({it.kind})" for n, it in enumerate(items) if n not in failed]
    if not failed:
        return Reply([], "All done: " + "; ".join(done) + ".")
    missed = [f"{items[n].given} {items[n].family} ({items[n].kind}: {op} failed)" for n, op in sorted(failed.items())]
    return Reply([], ("Completed: " + "; ".join(done) + ". " if done else "")
                 + "Could not complete: " + "; ".join(missed) + ".")
