"""The SIMULATED model: a deterministic policy that plays the agent's side from the conversation.

It reads the ticket (the first user message), the tool calls it made and the results it got, and
decides the next reply: which tools to call (several at once where a real model would), when to
repeat a failed call, when to give up, and the final summary. It never looks at the fault
schedule: a wrong or stale value is used as a real model would use it. Its own slips (giving up,
a wrong value, a call missing a parameter, a tool that does not exist) are set per episode by a
``Persona``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": "validate_address",
        "description": "Standardise and verify a delivery address.",
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "string"},
                "street": {"type": "string"},
                "city": {"type": "string"},
                "postal_code": {"type": "string"},
                "country": {"type": "string"},
            },
            "required": ["order_id", "street", "postal_code", "country"],
        },
    },
    {
        "name": "check_inventory",
        "description": "On-hand and allocatable stock of a SKU in a warehouse.",
        "input_schema": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "sku": {"type": "string"}, "warehouse": {"type": "string"}},
            "required": ["order_id", "sku", "warehouse"],
        },
    },
    {
        "name": "calculate_duties",
        "description": "Import duties for an HS code and declared value.",
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "string"},
                "hs_code": {"type": "string"},
                "value": {"type": "number"},
                "country": {"type": "string"},
            },
            "required": ["order_id", "hs_code", "value", "country"],
        },
    },
    {
        "name": "rate_shop",
        "description": "Quote every carrier service for an order.",
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "string"},
                "postal_code": {"type": "string"},
                "country": {"type": "string"},
                "weight_kg": {"type": "number"},
            },
            "required": ["order_id", "postal_code", "country", "weight_kg"],
        },
    },
    {
        "name": "book_shipment",
        "description": "Buy a label with a carrier service; returns the tracking number.",
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "string"},
                "carrier": {"type": "string"},
                "service": {"type": "string"},
                "street": {"type": "string"},
                "postal_code": {"type": "string"},
                "duties": {"type": "number"},
            },
            "required": ["order_id", "carrier", "service", "street", "postal_code"],
        },
    },
    {
        "name": "create_pick_list",
        "description": "Release a pick list to the warehouse floor.",
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "string"},
                "sku": {"type": "string"},
                "qty": {"type": "integer"},
                "warehouse": {"type": "string"},
            },
            "required": ["order_id", "sku", "qty", "warehouse"],
        },
    },
    {
        "name": "schedule_dock",
        "description": "Book an outbound dock door for the carrier pickup.",
        "input_schema": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "warehouse": {"type": "string"}, "day": {"type": "string"}},
            "required": ["order_id", "warehouse", "day"],
        },
    },
    {
        "name": "notify_customer",
        "description": "Send the customer a notification.",
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "string"},
                "channel": {"type": "string"},
                "message": {"type": "string"},
            },
            "required": ["order_id", "message"],
        },
    },
    {
        "name": "track_shipment",
        "description": "Latest carrier status and scans of an order's shipment.",
        "input_schema": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "tracking_number": {"type": "string"}},
            "required": ["order_id"],
        },
    },
]
DECLARED = {t["name"]: set(t["input_schema"]["properties"]) for t in TOOL_SCHEMAS}


def stream_turn(task_id: str, turn: int) -> bool:
    """Whether the agent streams its ``turn``-th call (``messages.stream``) or uses ``create``."""
    return int(hashlib.sha256(f"{task_id}|{turn}".encode()).hexdigest()[:8], 16) % 3 != 0


@dataclass
class Persona:
    """How this episode's model behaves: its patience and its own slip, if any."""

    retries: int = 1  # repeats of a failed tool call before giving up
    slip: str = ""  # "", give_up, prose, wrong_carrier, wrong_qty, wrong_duties,
    slip_order: int = 0  # missing_param, unknown_tool, skip_notify, wrong_status


@dataclass
class Reply:
    blocks: list[dict[str, Any]]
    stop_reason: str


def _ticket(messages: list[dict[str, Any]]) -> dict[str, Any]:
    first = messages[0]["content"]
    text = first if isinstance(first, str) else "".join(b.get("text", "") for b in first)
    return json.loads(text.split("```json", 1)[1].split("```", 1)[0])


def _history(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, tuple[str, bool]]]:
    calls: list[dict[str, Any]] = []
    results: dict[str, tuple[str, bool]] = {}
    for m in messages:
        if isinstance(m["content"], str):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_use":
                calls.append(b)
            elif b.get("type") == "tool_result":
                c = b.get("content", "")
                text = c if isinstance(c, str) else "".join(x.get("text", "") for x in c)
                results[b["tool_use_id"]] = (text, bool(b.get("is_error")))
    return calls, results


def interpret(tool: str, text: str, is_error: bool) -> tuple[bool, Any]:
    """(usable, value) as the model reads a tool result; renamed keys are misread, not noticed."""
    if is_error:
        return False, None
    try:
        d = json.loads(text)
    except ValueError:
        return False, None
    if not isinstance(d, dict) or not d:
        return False, None
    if tool == "validate_address":
        std = d.get("standardized")
        return (True, std) if isinstance(std, dict) and "postal_code" in std else (False, None)
    if tool == "check_inventory":
        if "allocatable" in d:
            return True, int(d["allocatable"])
        return ("ItemNumber" in d or "AvailableOnHandQuantity" in d), 0
    if tool == "calculate_duties":
        if isinstance(d.get("duties"), (int, float)):
            return True, float(d["duties"])
        return ("totalTax" in d), 0.0
    if tool == "rate_shop":
        rates = d.get("rates")
        return (True, rates) if isinstance(rates, list) and rates else (False, None)
    if tool == "track_shipment":
        if "status" in d:
            return True, str(d["status"])
        return ("shipmentStatus" in d), "unknown"
    key = {
        "book_shipment": "tracking_number",
        "create_pick_list": "pick_id",
        "schedule_dock": "appointment_id",
        "notify_customer": "message_id",
    }[tool]
    return (True, d[key]) if key in d else (False, None)


def choose_rate(rates: list[dict[str, Any]], deadline: int, second: bool = False) -> tuple[str, str]:
    """Cheapest service within the deadline; when prices cannot be compared, the first listed."""
    readable = all(
        isinstance(r.get("amount"), (int, float)) and isinstance(r.get("transit_days"), int) and "carrier" in r
        for r in rates
    )
    if not readable:
        r = rates[0]
        return str(r.get("carrier") or r.get("carrierCode")), str(r.get("service") or r.get("serviceType"))
    ok = sorted((r for r in rates if r["transit_days"] <= deadline), key=lambda r: r["amount"]) or rates
    pick = ok[1] if second and len(ok) > 1 else ok[0]
    return pick["carrier"], pick["service"]


def _final(text: str) -> Reply:
    return Reply([{"type": "text", "text": text}], "end_turn")


def _tool_use(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": args}


def decide(messages: list[dict[str, Any]], persona: Persona) -> Reply:
    """The next assistant reply for this conversation."""
    ticket = _ticket(messages)
    calls, results = _history(messages)
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    current = ticket["orders"][0]["order_id"]
    for c in calls:
        # a call that lost its order_id belongs to the order the model was working on
        current = str(c["input"].get("order_id") or current)
        by_key.setdefault((current, c["name"]), []).append(c)
    if any(c["name"] not in DECLARED for c in calls):
        bad = next(c["name"] for c in calls if c["name"] not in DECLARED)
        return _final(f"I couldn't find a working `{bad}` tool, so I stopped before booking the remaining orders.")
    done: list[str] = []
    for k, o in enumerate(ticket["orders"]):
        oid = o["order_id"]
        slip = persona.slip if k == persona.slip_order else ""
        if (
            slip in ("give_up", "prose")
            and not by_key.get((oid, "validate_address"))
            and not by_key.get((oid, "track_shipment"))
        ):
            if slip == "prose":
                return _final(
                    f"For {oid} the next step would be to rate-shop and book the cheapest carrier, "
                    "then release the pick list and notify the customer."
                )
            return _final(
                f"Processed {', '.join(done) or 'no orders'}; I'll stop here and leave the rest for manual review."
            )
        known: dict[str, Any] = {}
        phases = _phases(ticket, o)
        for phase in phases:
            needed: list[dict[str, Any]] = []
            for tool in phase:
                args = _args(tool, ticket, o, known, slip)
                if args is None:
                    continue
                if tool == "rate_shop" and slip == "unknown_tool":
                    return Reply([_tool_use("get_shipping_rates", args)], "tool_use")
                history = by_key.get((oid, tool), [])
                if not history:
                    needed.append(_tool_use(tool, args))
                    continue
                last = history[-1]
                text, is_error = results.get(last["id"], ("", True))
                usable, value = interpret(tool, text, is_error)
                if usable:
                    known[tool] = value
                    continue
                if len(history) <= persona.retries:
                    needed.append(_tool_use(tool, dict(last["input"])))
                    continue
                return _final(
                    f"I could not complete order {oid}: `{tool}` kept failing "
                    f"({text[:120] or 'no content'}). Stopping here."
                )
            if needed:
                return Reply(needed, "tool_use")
            if "check_inventory" in known and known["check_inventory"] < o["qty"]:
                done.append(f"{oid} (backordered: not enough stock)")
                break
        else:
            done.append(oid)
    return _final("Done: " + "; ".join(done) + ".")


def _phases(ticket: dict[str, Any], o: dict[str, Any]) -> list[tuple[str, ...]]:
    if ticket["task"] == "track":
        return [("track_shipment",), ("notify_customer",)]
    phases: list[tuple[str, ...]] = [("validate_address", "check_inventory")]
    if o["ship_to"]["country"] != "US":
        phases.append(("calculate_duties",))
    return [*phases, ("rate_shop",), ("book_shipment",), ("create_pick_list", "schedule_dock"), ("notify_customer",)]


def _args(
    tool: str, ticket: dict[str, Any], o: dict[str, Any], known: dict[str, Any], slip: str
) -> dict[str, Any] | None:
    oid, to = o["order_id"], o["ship_to"]
    if tool == "validate_address":
        return {
            "order_id": oid,
            "street": to["street"],
            "city": to["city"],
            "postal_code": to["postal_code"],
            "country": to["country"],
        }
    if tool == "check_inventory":
        return {"order_id": oid, "sku": o["sku"], "warehouse": o["warehouse"]}
    if tool == "calculate_duties":
        return {"order_id": oid, "hs_code": o["hs_code"], "value": o["declared_value"], "country": to["country"]}
    if tool == "rate_shop":
        return {
            "order_id": oid,
            "postal_code": known["validate_address"]["postal_code"],
            "country": to["country"],
            "weight_kg": o["weight_kg"],
        }
    if tool == "book_shipment":
        carrier, service = choose_rate(known["rate_shop"], o["deliver_within_days"], second=slip == "wrong_carrier")
        std = known["validate_address"]
        duties = known.get("calculate_duties", 0.0)
        if slip == "wrong_duties":
            duties = o["declared_value"]
        args = {
            "order_id": oid,
            "carrier": carrier,
            "service": service,
            "street": std["street"],
            "postal_code": std["postal_code"],
            "duties": duties,
        }
        if slip == "missing_param":
            del args["street"]
        return args
    if tool == "create_pick_list":
        return {
            "order_id": oid,
            "sku": o["sku"],
            "qty": o["qty"] + (1 if slip == "wrong_qty" else 0),
            "warehouse": o["warehouse"],
        }
    if tool == "schedule_dock":
        return {"order_id": oid, "warehouse": o["warehouse"], "day": ticket["ship_day"]}
    if tool == "notify_customer":
        if slip == "skip_notify":
            return None
        if ticket["task"] == "track":
            status = known["track_shipment"]
            if slip == "wrong_status":
                status = "delivered" if status != "delivered" else "in_transit"
            return {"order_id": oid, "channel": "sms", "message": f"Update on {oid}: carrier status is {status}."}
        trk = known["book_shipment"]
        return {
            "order_id": oid,
            "channel": "email",
            "message": f"Your order {oid} has shipped. Tracking number: {trk}.",
        }
    if tool == "track_shipment":
        return {"order_id": oid, "tracking_number": o.get("tracking_number", "")}
    raise KeyError(tool)
