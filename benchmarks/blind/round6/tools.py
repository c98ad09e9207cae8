"""Tool-side forms applied to a tool call: an error text instead of the result, or the result altered.

Shared by the local tool wrappers (agent process) and the MCP server (server process). An error
form means the service behind the tool refused: nothing happened in the world. A data form means
the tool ran and what the agent is shown differs from what happened.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from .forms import Form


@dataclass(frozen=True)
class Shown:
    """What the agent is shown for one tool call."""

    text: str
    is_error: bool = False
    raise_as: str = ""  # local tools: raise this exception class with ``text``


def fill(template: str, key: str, args: dict[str, Any]) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()
    rid = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
    return (
        template.replace("{rid}", rid)
        .replace("{date}", str(args.get("checkin") or args.get("date") or ""))
        .replace("{contact}", "traveller@example.org")
    )


def _next_char(s: str) -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    last = s[-1]
    return s[:-1] + (alphabet[(alphabet.index(last) + 1) % len(alphabet)] if last in alphabet else "Z")


def _cheapest(items: list[dict[str, Any]], key: str) -> int:
    return min(range(len(items)), key=lambda i: items[i][key])


def _camel(k: str) -> str:
    head, *rest = k.split("_")
    return head + "".join(p.title() for p in rest)


def transform(op: str, result: dict[str, Any]) -> str:
    """The altered result text for a data form (``result`` is the true result)."""
    r = copy.deepcopy(result)
    if op == "json_cut":
        text = json.dumps(result)
        return text[: max(8, int(len(text) * 0.55))]
    if op == "empty_list":
        return "[]"
    if op == "empty_object":
        return "{}"
    if op == "null":
        return "null"
    if op == "empty_string":
        return ""
    if op in (
        "fare_shift",
        "flight_swap",
        "fare_strings",
        "fare_renamed",
        "flights_count_cut",
        "flights_timed_out",
        "flights_halved",
        "flights_cut_line",
    ):
        fl = r["flights"]
        half = len(fl) // 2
        if op == "fare_shift":
            i = _cheapest(fl, "fare")
            fl[i]["fare"] = round(fl[i]["fare"] * 1.09, 2)
        elif op == "flight_swap":
            i = _cheapest(fl, "fare")
            j = (i + 1) % len(fl)
            fl[i]["flight_id"], fl[j]["flight_id"] = fl[j]["flight_id"], fl[i]["flight_id"]
        elif op == "fare_strings":
            for f in fl:
                f["fare"] = f"{f['fare']:.2f}"
                f["seats_left"] = str(f["seats_left"])
        elif op == "fare_renamed":
            for f in fl:
                f["total_amount"] = f"{f.pop('fare'):.2f}"
                f["total_currency"] = "EUR"
        elif op == "flights_count_cut":
            r["flights"] = fl[:half]
            r["meta"] = {"count": len(fl)}
            r.pop("count")
        elif op == "flights_timed_out":
            r["flights"] = fl[:half]
            r["timed_out"] = True
            r["count"] = half
        elif op == "flights_halved":
            r["flights"] = fl[:half]
            r["count"] = half
        elif op == "flights_cut_line":
            r["flights"] = fl[:half]
            r["count"] = half
            return json.dumps(r, indent=1) + f"\n... output truncated ({len(fl) - half} more results not shown)"
        return json.dumps(r)
    if op == "booking_neighbour":
        r["booking_ref"] = _next_char(r["booking_ref"])
    elif op == "old_fare_shift":
        r["old_fare"] = round(r["old_fare"] * 1.07, 2)
    elif op == "channel_swap":
        r["channel"] = "email" if r["channel"] == "sms" else "sms"
    elif op == "fee_shift":
        r["change_fee"] = round(r["change_fee"] + 25.0, 2)
    elif op == "seat_neighbour":
        r["seat"] = r["seat"][:-1] + chr(ord(r["seat"][-1]) + 1)
    elif op == "rate_shift":
        i = _cheapest(r["hotels"], "rate")
        r["hotels"][i]["rate"] = round(r["hotels"][i]["rate"] * 1.15, 2)
    elif op == "confirmation_neighbour":
        r["confirmation"] = _next_char(r["confirmation"])
    elif op == "profile_camel":
        r = {_camel(k): v for k, v in r.items()}
    elif op == "rate_renamed":
        for h in r["hotels"]:
            h["net"] = f"{h.pop('rate'):.2f}"
    elif op == "hotels_total_cut":
        r["total"] = len(r["hotels"])
        r["hotels"] = r["hotels"][:2]
    elif op == "profile_halved":
        keys = list(r)
        r = {k: r[k] for k in keys[: len(keys) // 2]}
    elif op == "fee_camel":
        r["changeFee"] = r.pop("change_fee")
        r["refundDifference"] = r.pop("refund_difference")
    elif op == "confirmation_renamed":
        r["record_locator"] = r.pop("confirmation")
    else:
        raise ValueError(f"unknown data op {op}")
    return json.dumps(r)


def shown_for(form: Form, key: str, args: dict[str, Any], result: dict[str, Any] | None) -> Shown:
    """What the agent sees when ``form`` hits a call (``result``: the tool's real result, data forms)."""
    if form.kind == "data":
        assert result is not None
        return Shown(transform(form.extra["op"], result))
    return Shown(fill(form.text, key, args), is_error=True, raise_as=form.extra.get("exc", ""))


def salvage_objects(text: str, marker: str) -> list[dict[str, Any]]:
    """Complete flat JSON objects containing ``marker`` found in a broken text (used by the model)."""
    out = []
    for m in re.finditer(r"\{[^{}]*\}", text):
        if marker in m.group(0):
            try:
                out.append(json.loads(m.group(0)))
            except ValueError:
                continue
    return out
