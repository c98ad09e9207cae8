"""The travel desk's world: one SQLite file per task, the nine tools that act on it, and the grader.

A task is a disrupted trip: a cancelled flight and one to five travellers to rebook. The world is
built from (seed, task id) alone, so the agent's process and the server's process build the same
thing. The grader reads only the final state (bookings, holds, refunds, rides, notifications) and
the agent's final answer.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOLD_TTL_S = 1.6  # a seat hold lapses when the rebooking comes later than this
AIRPORTS = [
    ("LHR", "London"),
    ("CDG", "Paris"),
    ("FRA", "Frankfurt"),
    ("AMS", "Amsterdam"),
    ("MAD", "Madrid"),
    ("FCO", "Rome"),
    ("ZRH", "Zurich"),
    ("VIE", "Vienna"),
    ("CPH", "Copenhagen"),
    ("LIS", "Lisbon"),
    ("DUB", "Dublin"),
    ("ARN", "Stockholm"),
    ("WAW", "Warsaw"),
    ("ATH", "Athens"),
    ("MUC", "Munich"),
]
CARRIERS = ["BA", "AF", "LH", "KL", "IB", "AZ", "LX", "OS", "SK", "TP", "EI", "LO", "A3"]
NAMES = [
    "Ines Moreau",
    "Tomas Berg",
    "Aiko Tanaka",
    "Ravi Menon",
    "Lena Fischer",
    "Omar Haddad",
    "Sofia Rossi",
    "Jonas Weber",
    "Mei Lin",
    "Pablo Ortega",
    "Nora Jensen",
    "Kofi Mensah",
    "Elif Kaya",
    "Ana Costa",
]
HOTEL_WORDS = ["Meridian", "Harbour", "Skyline", "Linden", "Aurora", "Cedar", "Beacon", "Granite", "Willow", "Atlas"]


@dataclass(frozen=True)
class TaskSpec:
    """What the traveller-care ticket says (and what the agent is told)."""

    task_id: str
    origin: str
    destination: str
    city: str
    date: str
    travellers: tuple[str, ...]
    overnight: bool


SCHEMA = """
CREATE TABLE travellers(traveller_id TEXT PRIMARY KEY, name TEXT, booking_ref TEXT, old_fare REAL, cabin_policy TEXT,
  seat_pref TEXT, channel TEXT, contact TEXT);
CREATE TABLE bookings(booking_ref TEXT PRIMARY KEY, traveller_id TEXT, flight_id TEXT, confirmation TEXT, seat TEXT);
CREATE TABLE flights(flight_id TEXT PRIMARY KEY, carrier TEXT, origin TEXT, destination TEXT, date TEXT, depart TEXT,
  arrive TEXT, cabin TEXT, fare REAL, fare_id TEXT, seats_left INTEGER, change_fee REAL, refundable INTEGER,
  pos INTEGER);
CREATE TABLE holds(hold_id TEXT PRIMARY KEY, flight_id TEXT, traveller_id TEXT, seat TEXT, created REAL, used INTEGER);
CREATE TABLE refunds(refund_id TEXT PRIMARY KEY, booking_ref TEXT, amount REAL);
CREATE TABLE hotels(hotel_id TEXT PRIMARY KEY, name TEXT, city TEXT, area TEXT, rate REAL, pos INTEGER);
CREATE TABLE rides(ride_id TEXT PRIMARY KEY, pickup TEXT, dropoff TEXT, pickup_time TEXT);
CREATE TABLE notes(message_id TEXT PRIMARY KEY, traveller_id TEXT, channel TEXT, message TEXT);
CREATE TABLE log(seq INTEGER PRIMARY KEY AUTOINCREMENT, side TEXT, turn INTEGER, attempt INTEGER, tool TEXT,
  occurrence INTEGER, form TEXT);
"""


def connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=30, isolation_level=None)
    con.row_factory = sqlite3.Row
    return con


def build_world(
    path: Path,
    seed: int,
    task_id: str,
    n_travellers: int,
    overnight: bool,
    traps: frozenset[str] = frozenset(),
    airport_hotels: bool = True,
    no_seat_pref: bool = False,
) -> TaskSpec:
    """Create the task's world. ``traps`` arrange the data so a given data fault changes the choice."""
    rng = random.Random(f"{seed}:{task_id}:world")
    (orig, _), (dest, city) = rng.sample(AIRPORTS, 2)
    date = f"2026-12-{rng.randint(8, 27):02d}"
    con = connect(path)
    con.executescript(SCHEMA)
    tids = []
    for i in range(n_travellers):
        tid = f"TRV-{rng.randint(10000, 99999)}"
        while tid in tids:
            tid = f"TRV-{rng.randint(10000, 99999)}"
        tids.append(tid)
        ref = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
        pref = None if (no_seat_pref and i == 0) else rng.choice(["aisle", "window"])
        channel = rng.choice(["sms", "email"])
        name = NAMES[rng.randrange(len(NAMES))]
        contact = (
            f"+44 7700 9{rng.randint(10000, 99999)}" if channel == "sms" else f"{name.split()[0].lower()}@example.org"
        )
        old = round(rng.uniform(700, 950), 2) if "fare_strings" not in traps else round(rng.uniform(1150, 1400), 2)
        con.execute(
            "INSERT INTO travellers VALUES(?,?,?,?,?,?,?,?)", (tid, name, ref, old, "economy", pref, channel, contact)
        )
        con.execute(
            "INSERT INTO bookings VALUES(?,?,?,?,?)",
            (ref, tid, f"{rng.choice(CARRIERS)}{rng.randint(100, 999)}X", "", ""),
        )
    n_f = 8
    base = rng.uniform(240, 520) if "fare_strings" not in traps else 985.0
    fares = sorted(round(base * (1 + 0.035 * k + rng.uniform(0, 0.01)), 2) for k in range(n_f))
    if "fare_strings" in traps:  # cheapest below 1000, the others above: compared as text, "10xx" < "985"
        fares = [round(985 + 5 * rng.random(), 2)] + [round(1010 + 40 * k + rng.random(), 2) for k in range(n_f - 1)]
    order = list(range(n_f))
    rng.shuffle(order)
    cheapest_pos = n_f - 1 - rng.randrange(3) if traps & {"late_cheapest"} else order.index(0)
    if traps & {"late_cheapest"}:  # the cheapest listed in the latter part, so a cut list misses it
        order.remove(0)
        order.insert(cheapest_pos, 0)
    if traps & {"first_not_cheapest"} and order[0] == 0:
        order[0], order[1] = order[1], order[0]
    for pos, k in enumerate(order):
        fid = f"{rng.choice(CARRIERS)}{rng.randint(1000, 9899)}"
        hour = 6 + pos * 2
        cabin = "economy" if k != 1 or "premium_second" not in traps else "premium"
        con.execute(
            "INSERT OR REPLACE INTO flights VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                fid,
                fid[:2],
                orig,
                dest,
                date,
                f"{date}T{hour:02d}:{rng.choice(['05', '20', '35', '50'])}",
                f"{date}T{hour + 2:02d}:{rng.choice(['10', '25', '40', '55'])}",
                cabin,
                fares[k],
                f"FR-{fid}-{rng.randint(100, 999)}",
                9,
                float(rng.choice([35, 50, 70] if "fee_nonzero" in traps else [0, 35, 50, 70])),
                1,
                pos,
            ),
        )
    if overnight:
        hbase = rng.uniform(95, 140)
        rates = [round(hbase * (1 + 0.06 * k), 2) for k in range(5)]
        horder = list(range(5))
        rng.shuffle(horder)
        if "first_not_cheapest_hotel" in traps and horder[0] == 0:
            horder[0], horder[1] = horder[1], horder[0]
        if "late_cheapest_hotel" in traps:
            horder.remove(0)
            horder.insert(4, 0)
        for pos, k in enumerate(horder):
            area = "airport" if airport_hotels else "city"
            con.execute(
                "INSERT INTO hotels VALUES(?,?,?,?,?,?)",
                (
                    f"H{rng.randint(10000, 99999)}",
                    f"{rng.choice(HOTEL_WORDS)} {city} {['Inn', 'Hotel', 'Suites', 'Lodge'][k % 4]}",
                    city,
                    area,
                    rates[k],
                    pos,
                ),
            )
        if not airport_hotels:
            pass
    con.close()
    return TaskSpec(task_id, orig, dest, city, date, tuple(tids), overnight)


def _rid(rng: random.Random, prefix: str) -> str:
    return f"{prefix}{rng.randint(100000, 999999)}"


class ToolError(Exception):
    """The service refused the call (a real refusal of the world, not an injected one)."""


def _require(args: dict[str, Any], *names: str) -> None:
    missing = [n for n in names if not isinstance(args.get(n), (str, int, float)) or args.get(n) == ""]
    if missing:
        raise ToolError(
            json.dumps({"error": "invalid_argument", "message": f"missing or invalid: {', '.join(missing)}"})
        )


def run_tool(path: Path, name: str, args: dict[str, Any], salt: str) -> dict[str, Any]:
    """Execute one tool call against the world; raises ToolError with the service's refusal."""
    rng = random.Random(f"{path.name}:{name}:{salt}")
    con = connect(path)
    try:
        return _TOOLS[name](con, args, rng)
    finally:
        con.close()


def _get_traveller(con: sqlite3.Connection, a: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    _require(a, "traveller_id")
    row = con.execute("SELECT * FROM travellers WHERE traveller_id=?", (a["traveller_id"],)).fetchone()
    if row is None:
        raise ToolError(json.dumps({"error": "not_found", "message": f"no traveller {a['traveller_id']}"}))
    return dict(row)


def _search_flights(con: sqlite3.Connection, a: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    _require(a, "origin", "destination", "date")
    rows = con.execute(
        "SELECT flight_id, carrier, depart, arrive, cabin, fare, fare_id, seats_left FROM flights "
        "WHERE origin=? AND destination=? AND date=? ORDER BY pos",
        (a["origin"], a["destination"], a["date"]),
    ).fetchall()
    if (
        not rows
        and not con.execute(
            "SELECT 1 FROM flights WHERE origin=? OR destination=?", (a["origin"], a["destination"])
        ).fetchone()
    ):
        raise ToolError(
            json.dumps({"error": "unknown_airport", "message": "origin or destination is not a known IATA code"})
        )
    flights = [dict(r) for r in rows]
    return {
        "origin": a["origin"],
        "destination": a["destination"],
        "date": a["date"],
        "flights": flights,
        "count": len(flights),
    }


def _get_fare_rules(con: sqlite3.Connection, a: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    _require(a, "fare_id")
    row = con.execute(
        "SELECT fare_id, fare, change_fee, refundable FROM flights WHERE fare_id=?", (a["fare_id"],)
    ).fetchone()
    if row is None:
        raise ToolError(json.dumps({"error": "not_found", "message": f"no fare {a['fare_id']}"}))
    return {
        "fare_id": row["fare_id"],
        "fare": row["fare"],
        "refund_difference": bool(row["refundable"]),
        "change_fee": row["change_fee"],
        "currency": "EUR",
    }


def _hold_seat(con: sqlite3.Connection, a: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    _require(a, "flight_id", "traveller_id")
    flight = con.execute("SELECT * FROM flights WHERE flight_id=?", (a["flight_id"],)).fetchone()
    if flight is None:
        raise ToolError(json.dumps({"error": "not_found", "message": f"no flight {a['flight_id']}"}))
    if con.execute("SELECT 1 FROM travellers WHERE traveller_id=?", (a["traveller_id"],)).fetchone() is None:
        raise ToolError(json.dumps({"error": "not_found", "message": f"no traveller {a['traveller_id']}"}))
    pref = a.get("seat_pref") or "any"
    n = con.execute("SELECT COUNT(*) FROM holds WHERE flight_id=?", (a["flight_id"],)).fetchone()[0]
    row = 12 + n
    letter = {"aisle": "C", "window": "A"}.get(pref, "B")
    hold = {
        "hold_id": _rid(rng, "HLD-"),
        "flight_id": a["flight_id"],
        "seat": f"{row}{letter}",
        "expires_in_s": HOLD_TTL_S,
    }
    con.execute(
        "INSERT INTO holds VALUES(?,?,?,?,?,0)",
        (hold["hold_id"], a["flight_id"], a["traveller_id"], hold["seat"], time.monotonic()),
    )
    return hold


def _rebook_flight(con: sqlite3.Connection, a: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    _require(a, "booking_ref", "flight_id", "hold_id")
    hold = con.execute("SELECT * FROM holds WHERE hold_id=?", (a["hold_id"],)).fetchone()
    booking = con.execute("SELECT * FROM bookings WHERE booking_ref=?", (a["booking_ref"],)).fetchone()
    if booking is None:
        raise ToolError(json.dumps({"error": "not_found", "message": f"no booking {a['booking_ref']}"}))
    if hold is None or hold["flight_id"] != a["flight_id"]:
        raise ToolError(json.dumps({"error": "hold_not_found", "message": "no seat hold for this flight"}))
    if hold["traveller_id"] != booking["traveller_id"]:
        raise ToolError(json.dumps({"error": "hold_mismatch", "message": "the hold belongs to another traveller"}))
    if time.monotonic() - hold["created"] > HOLD_TTL_S:
        raise ToolError(json.dumps({"error": "hold_expired", "message": "the seat hold has lapsed; hold a seat again"}))
    conf = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(6))
    con.execute(
        "UPDATE bookings SET flight_id=?, confirmation=?, seat=? WHERE booking_ref=?",
        (a["flight_id"], conf, hold["seat"], a["booking_ref"]),
    )
    con.execute("UPDATE holds SET used=1 WHERE hold_id=?", (a["hold_id"],))
    return {
        "booking_ref": a["booking_ref"],
        "flight_id": a["flight_id"],
        "confirmation": conf,
        "seat": hold["seat"],
        "status": "ticketed",
    }


def _issue_refund(con: sqlite3.Connection, a: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    _require(a, "booking_ref", "amount")
    if con.execute("SELECT 1 FROM bookings WHERE booking_ref=?", (a["booking_ref"],)).fetchone() is None:
        raise ToolError(json.dumps({"error": "not_found", "message": f"no booking {a['booking_ref']}"}))
    rid = _rid(rng, "RF-")
    con.execute(
        "INSERT INTO refunds VALUES(?,?,?)",
        (f"{rid}-{con.execute('SELECT COUNT(*) FROM refunds').fetchone()[0]}", a["booking_ref"], float(a["amount"])),
    )
    return {"refund_id": rid, "booking_ref": a["booking_ref"], "amount": float(a["amount"]), "status": "submitted"}


def _find_hotels(con: sqlite3.Connection, a: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    _require(a, "city", "checkin")
    area = a.get("area") or "city"
    rows = con.execute(
        "SELECT hotel_id, name, area, rate FROM hotels WHERE city=? AND area=? ORDER BY pos", (a["city"], area)
    ).fetchall()
    return {"city": a["city"], "checkin": a["checkin"], "hotels": [dict(r) for r in rows]}


def _book_ground(con: sqlite3.Connection, a: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    _require(a, "pickup", "dropoff", "pickup_time")
    rid = _rid(rng, "RIDE-")
    con.execute("INSERT INTO rides VALUES(?,?,?,?)", (rid, a["pickup"], a["dropoff"], a["pickup_time"]))
    return {"ride_id": rid, "eta_min": rng.randint(6, 25), "status": "confirmed"}


def _notify(con: sqlite3.Connection, a: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    _require(a, "traveller_id", "channel", "message")
    mid = _rid(rng, "MSG-")
    con.execute(
        "INSERT INTO notes VALUES(?,?,?,?)",
        (f"{mid}-{a['traveller_id']}", a["traveller_id"], a["channel"], a["message"]),
    )
    return {"message_id": mid, "status": "queued"}


_TOOLS = {
    "get_traveller": _get_traveller,
    "search_flights": _search_flights,
    "get_fare_rules": _get_fare_rules,
    "hold_seat": _hold_seat,
    "rebook_flight": _rebook_flight,
    "issue_refund": _issue_refund,
    "find_hotels": _find_hotels,
    "book_ground": _book_ground,
    "notify_traveller": _notify,
}
TOOL_NAMES = tuple(_TOOLS)


def expected(path: Path) -> dict[str, Any]:
    """The right outcome, computed from the world alone."""
    con = connect(path)
    try:
        flights = [dict(r) for r in con.execute("SELECT * FROM flights WHERE cabin='economy' ORDER BY fare, pos")]
        best = flights[0]
        out: dict[str, Any] = {"flight_id": best["flight_id"], "refunds": {}}
        for t in con.execute("SELECT * FROM travellers"):
            diff = round(t["old_fare"] - best["fare"] - best["change_fee"], 2)
            out["refunds"][t["booking_ref"]] = diff if diff > 0 else 0.0
        hotels = [dict(r) for r in con.execute("SELECT * FROM hotels ORDER BY rate")]
        out["hotel"] = hotels[0]["name"] if hotels else None
        return out
    finally:
        con.close()


def grade(path: Path, spec: TaskSpec, final_answer: str) -> tuple[bool, str]:
    """True when the final state is the right one; the reason otherwise."""
    want = expected(path)
    con = connect(path)
    try:
        for t in con.execute("SELECT * FROM travellers").fetchall():
            b = con.execute("SELECT * FROM bookings WHERE booking_ref=?", (t["booking_ref"],)).fetchone()
            if b["flight_id"] != want["flight_id"]:
                return False, f"{t['traveller_id']} not on {want['flight_id']}"
            paid = round(
                sum(
                    r["amount"]
                    for r in con.execute("SELECT amount FROM refunds WHERE booking_ref=?", (t["booking_ref"],))
                ),
                2,
            )
            if abs(paid - want["refunds"][t["booking_ref"]]) > 0.01:
                return False, f"refund {paid} for {t['booking_ref']}"
            notes = con.execute(
                "SELECT * FROM notes WHERE traveller_id=? AND channel=?", (t["traveller_id"], t["channel"])
            ).fetchall()
            if not any(b["confirmation"] in n["message"] and b["seat"] in n["message"] for n in notes):
                return False, f"{t['traveller_id']} not notified"
            if b["confirmation"] not in final_answer:
                return False, "final answer lacks a confirmation"
        if spec.overnight:
            rides = con.execute("SELECT * FROM rides").fetchall()
            if len(rides) != 1 or rides[0]["dropoff"] != want["hotel"]:
                return False, "ground transport"
        return True, "ok"
    finally:
        con.close()


def log_fault(path: Path, side: str, turn: int, attempt: int, tool: str, occurrence: int, form: str) -> None:
    con = connect(path)
    try:
        con.execute(
            "INSERT INTO log(side, turn, attempt, tool, occurrence, form) VALUES(?,?,?,?,?,?)",
            (side, turn, attempt, tool, occurrence, form),
        )
    finally:
        con.close()
