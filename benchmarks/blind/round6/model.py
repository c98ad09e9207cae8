"""The SIMULATED model: a scripted travel-desk agent that plays its side from the conversation.

The policy is a generator that yields batches of tool calls and receives their result texts. To
answer a request, the server replays the conversation's tool results into a fresh policy and
returns whatever it asks for next (more tool calls, or the final answer). The model reads results
as a model would: it uses the values it is given (wrong or stale ones included), picks the first
listed option when it cannot find a price, salvages what it can from broken JSON, and treats a
result without the fields it needs as a failure of that call. Its own slips (``EpisodePlan.slip``)
are deliberate and deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

from .plan import EpisodePlan
from .tools import salvage_objects

Call = tuple[str, Any]  # (tool name, arguments dict or a raw argument string)
Policy = Generator[list[Call], list[str], str]


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _parse_flights(text: str) -> list[dict[str, Any]] | None:
    data = _loads(text)
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("flights"), list):
        return data["flights"]
    if data is None:
        got = salvage_objects(text, '"flight_id"')
        return got or None
    return None


def _parse_hotels(text: str) -> list[dict[str, Any]] | None:
    data = _loads(text)
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("hotels"), list):
        return data["hotels"]
    if data is None and text:
        return salvage_objects(text, '"hotel_id"') or None
    return None


def _dict_with(text: str, *keys: str) -> dict[str, Any] | None:
    data = _loads(text)
    if isinstance(data, dict) and all(k in data for k in keys):
        return data
    return None


def _pick(items: list[dict[str, Any]], price_key: str, rank: int = 0) -> dict[str, Any]:
    priced = [i for i in items if price_key in i]
    if not priced:
        return items[0]  # no price to compare: the first listed
    return sorted(priced, key=lambda i: i[price_key])[min(rank, len(priced) - 1)]


def policy(ep: EpisodePlan, task: dict[str, Any]) -> Policy:
    travellers: list[str] = list(task["travellers"])
    notes: list[str] = []

    def one(name: str, args: Any, parse: Any) -> Generator[list[Call], list[str], Any]:
        tries = 0
        while True:
            (text,) = yield [(name, args)]
            value = parse(text)
            if value is not None:
                return value
            tries += 1
            if not (ep.retry_on_error and tries < 2):
                return None

    def many(calls: list[Call], parse: Any) -> Generator[list[Call], list[str], list[Any]]:
        texts = yield calls
        values = [parse(t) for t in texts]
        for i, v in enumerate(values):
            if v is None and ep.retry_on_error:
                values[i] = yield from one(calls[i][0], calls[i][1], parse)
        return values

    def profile(t: str) -> dict[str, Any] | None:
        return _dict_with(t, "booking_ref", "old_fare")

    # 1. traveller profiles
    if ep.parallel_profiles:
        got = yield from many([("get_traveller", {"traveller_id": t}) for t in travellers], profile)
    else:
        got = []
        for t in travellers:
            got.append((yield from one("get_traveller", {"traveller_id": t}, profile)))
    profiles = {t: p for t, p in zip(travellers, got, strict=True) if p is not None}
    notes += [f"could not load the profile of {t}" for t in travellers if t not in profiles]
    # 2. flight search
    date = task["date"]
    if ep.slip == "wrong_date":
        date = date[:-2] + f"{int(date[-2:]) + 1:02d}"
    flights = yield from one(
        "search_flights", {"origin": task["origin"], "destination": task["destination"], "date": date}, _parse_flights
    )
    if not flights:
        return (
            "I could not find any replacement flight from "
            f"{task['origin']} to {task['destination']} on {date}; the travellers are not rebooked yet."
        )
    if ep.slip == "give_up_after_search":
        return "None of the listed flights seems to satisfy the travel policy, so I stopped before rebooking."
    economy = [f for f in flights if f.get("cabin", "economy") == "economy"]
    best = _pick(economy or flights, "fare", 1 if ep.slip == "second_cheapest" else 0)
    new_fare = best.get("fare", best.get("total_amount", 0))
    try:
        new_fare = float(new_fare)
    except (TypeError, ValueError):
        new_fare = 0.0
    # 3. fare rules
    rules = yield from one("get_fare_rules", {"fare_id": best.get("fare_id", "")}, lambda t: _dict_with(t, "fare_id"))
    if rules is None:
        notes.append("fare rules unavailable: refunds not issued")
    fee = 0.0 if rules is None or ep.slip == "forget_fee" else float(rules.get("change_fee", 0) or 0)
    # 4. per traveller
    done: dict[str, tuple[str, str]] = {}
    for idx, t in enumerate(travellers):
        p = profiles.get(t)
        if p is None:
            continue
        if ep.slip == "stop_early" and idx == 1:
            break
        if ep.slip == "unknown_tool" and idx == 0:
            yield [("cancel_segment", {"booking_ref": p["booking_ref"]})]
            return "I could not cancel the original segment, so I stopped before rebooking anyone."
        pref = p.get("seat_pref") or "any"
        if ep.slip == "malformed_args" and idx == len(travellers) - 1:
            fid = best["flight_id"]
            # a trailing comma: the model wrote invalid JSON itself
            hold_args: Any = f'{{"flight_id": "{fid}", "traveller_id": "{t}", "seat_pref": "{pref}",}}'
        elif ep.slip == "missing_param" and idx == len(travellers) - 1:
            hold_args = {"traveller_id": t, "seat_pref": pref}
        else:
            hold_args = {"flight_id": best["flight_id"], "traveller_id": t, "seat_pref": pref}
        hold = yield from one("hold_seat", hold_args, lambda x: _dict_with(x, "hold_id", "seat"))
        if hold is None:
            notes.append(f"could not hold a seat for {t}")
            continue
        booked = yield from one(
            "rebook_flight",
            {"booking_ref": p["booking_ref"], "flight_id": best["flight_id"], "hold_id": hold["hold_id"]},
            lambda x: _dict_with(x, "booking_ref", "status"),
        )
        if booked is None:
            notes.append(f"could not rebook {t}")
            continue
        conf = str(booked.get("confirmation", ""))
        done[t] = (conf, hold["seat"])
        refund = round(float(p["old_fare"]) - new_fare - fee, 2) if rules is not None else 0.0
        message = (
            f"Your flight has been rebooked to {best['flight_id']} departing {best.get('depart', date)}, "
            f"seat {hold['seat']}, confirmation {conf}."
        )
        channel = p.get("channel")
        calls: list[Call] = []
        if refund > 0:
            calls.append(("issue_refund", {"booking_ref": p["booking_ref"], "amount": refund, "currency": "EUR"}))
        notify = channel is not None and not (ep.slip == "skip_last_notify" and idx == len(travellers) - 1)
        if notify:
            calls.append(("notify_traveller", {"traveller_id": t, "channel": channel, "message": message}))
        elif channel is None:
            notes.append(f"no contact channel for {t}")
        if ep.parallel_pairs and len(calls) == 2:
            yield from many(calls, lambda x: _dict_with(x, "status"))
        else:
            for c in calls:
                yield from one(c[0], c[1], lambda x: _dict_with(x, "status"))
    # 5. overnight: hotel and ground transport
    if task["overnight"]:
        hotels = yield from one(
            "find_hotels", {"city": task["city"], "checkin": task["date"], "area": "airport"}, _parse_hotels
        )
        if hotels == []:
            hotels = yield from one(
                "find_hotels", {"city": task["city"], "checkin": task["date"], "area": "city"}, _parse_hotels
            )
        if hotels:
            hotel = hotels[0] if ep.slip == "hotel_first_listed" else _pick(hotels, "rate")
            ride = yield from one(
                "book_ground",
                {
                    "pickup": f"{task['destination']} airport",
                    "dropoff": hotel["name"],
                    "pickup_time": best.get("arrive", date),
                },
                lambda x: _dict_with(x, "ride_id"),
            )
            if ride is None:
                notes.append("ground transport not booked")
        else:
            notes.append("no hotel found")
    # 6. the answer
    if not done:
        return "I could not rebook any traveller. " + "; ".join(notes)
    if ep.slip == "final_without_codes":
        return f"All set: the travellers are rebooked onto {best['flight_id']} and have been notified."
    lines = [f"- {t}: {best['flight_id']}, seat {seat}, confirmation {conf}" for t, (conf, seat) in done.items()]
    return "Rebooking summary:\n" + "\n".join(lines) + ("\nNotes: " + "; ".join(notes) if notes else "")


def history(messages: list[dict[str, Any]]) -> list[tuple[list[str], list[str]]]:
    """(tool names, result texts) per assistant turn that called tools, in order."""
    results = {}
    for m in messages:
        if m.get("role") == "tool":
            content = m.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            results.setdefault(m.get("tool_call_id"), []).append(content or "")
    out = []
    used: dict[str, int] = {}
    for m in messages:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            names, texts = [], []
            for c in m["tool_calls"]:
                names.append(c["function"]["name"])
                k = used.get(c["id"], 0)
                texts.append(results.get(c["id"], [""] * (k + 1))[min(k, len(results.get(c["id"], [""])) - 1)])
                used[c["id"]] = k + 1
            out.append((names, texts))
    return out


def decide(ep: EpisodePlan, task: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[list[Call], str]:
    """The model's next move: tool calls to make, or ([], final answer)."""
    gen = policy(ep, task)
    try:
        batch = next(gen)
        for names, texts in history(messages):
            if names != [c[0] for c in batch]:
                continue  # a turn the model does not recognise as its own (e.g. a replayed reply)
            batch = gen.send(texts)
    except StopIteration as stop:
        return [], str(stop.value)
    return batch, ""
