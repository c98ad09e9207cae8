"""The freight world: a SQLite file holding orders, their hidden truth, and what the agent did.

Both the MCP server (a subprocess) and the local tools read and write the same file, so a task is
graded by the state the agent left behind, not by what it said.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (order_id TEXT PRIMARY KEY, task_id TEXT, spec TEXT);
CREATE TABLE IF NOT EXISTS faults (task_id TEXT, tool TEXT, nth INTEGER, form TEXT,
    PRIMARY KEY (task_id, tool, nth));
CREATE TABLE IF NOT EXISTS fired (task_id TEXT, side TEXT, name TEXT, nth INTEGER, form TEXT);
CREATE TABLE IF NOT EXISTS shipments (order_id TEXT, carrier TEXT, service TEXT, street TEXT,
    postal_code TEXT, tracking TEXT, duties REAL);
CREATE TABLE IF NOT EXISTS picks (order_id TEXT, sku TEXT, qty INTEGER, warehouse TEXT);
CREATE TABLE IF NOT EXISTS docks (order_id TEXT, warehouse TEXT, day TEXT);
CREATE TABLE IF NOT EXISTS notes (order_id TEXT, channel TEXT, message TEXT);
"""

CARRIERS = [
    ("FEDEX", "FEDEX_GROUND"),
    ("FEDEX", "FEDEX_2_DAY"),
    ("UPS", "03"),
    ("UPS", "02"),
    ("DHL", "EXPRESS_WORLDWIDE"),
    ("USPS", "PRIORITY_MAIL"),
]
STREETS = [
    "Industrieweg",
    "Harbor Blvd",
    "Calle Mayor",
    "Rue de Lyon",
    "Königsallee",
    "Main St",
    "Dock Rd",
    "Nørregade",
    "Via Roma",
    "Kanalstraße",
]
CITIES = [
    ("US", "Memphis", "38118"),
    ("US", "Louisville", "40209"),
    ("DE", "Leipzig", "04435"),
    ("NL", "Venlo", "5928"),
    ("CA", "Mississauga", "L5T"),
    ("MX", "Monterrey", "64000"),
    ("GB", "Coventry", "CV3"),
    ("US", "Reno", "89502"),
]
WAREHOUSES = ["WH-MEM1", "WH-RNO2", "WH-LEJ1"]


@dataclass
class Order:
    """One order of a task, with the truth the grader checks against."""

    order_id: str
    street: str
    city: str
    country: str
    postal_code: str
    sku: str
    qty: int
    warehouse: str
    weight_kg: float
    deadline_days: int
    hs_code: str
    value: float
    duty_rate: float
    rates: list[dict[str, Any]]
    status: str

    @property
    def international(self) -> bool:
        return self.country != "US"

    def best_rate(self) -> dict[str, Any]:
        ok = [r for r in self.rates if r["transit_days"] <= self.deadline_days]
        return min(ok, key=lambda r: r["amount"])

    def duties(self) -> float:
        return round(self.value * self.duty_rate, 2) if self.international else 0.0

    def public(self) -> dict[str, Any]:
        """What the ticket tells the agent (no hidden truth)."""
        return {
            "order_id": self.order_id,
            "ship_to": {
                "street": self.street,
                "city": self.city,
                "country": self.country,
                "postal_code": self.postal_code,
            },
            "sku": self.sku,
            "qty": self.qty,
            "warehouse": self.warehouse,
            "weight_kg": self.weight_kg,
            "deliver_within_days": self.deadline_days,
            "hs_code": self.hs_code,
            "declared_value": self.value,
        }


def make_order(rng: random.Random, order_id: str) -> Order:
    """A random order whose rate table has one clear best service, never listed first.

    The first listed service always meets the deadline but costs more, so an agent that cannot
    compare prices (and takes the first) books the wrong one.
    """
    country, city, postal = rng.choice(CITIES)
    deadline = rng.choice([3, 5])
    base = round(rng.uniform(14, 60), 2)
    rates = [
        {
            "carrier": c,
            "service": s,
            "amount": round(base * (1.06 + 0.05 * i), 2),
            "transit_days": rng.choice([1, 2, 3, 5, 6]),
        }
        for i, (c, s) in enumerate(CARRIERS)
    ]
    best = rng.choice(rates)
    best["amount"] = base
    best["transit_days"] = min(best["transit_days"], deadline)
    others = [r for r in rates if r is not best]
    rng.shuffle(others)
    others[0]["transit_days"] = min(others[0]["transit_days"], deadline)
    ordered = [others[0], *others[1:]]
    ordered.insert(rng.randint(1, len(ordered)), best)
    return Order(
        order_id=order_id,
        street=f"{rng.randint(2, 980)} {rng.choice(STREETS)}",
        city=city,
        country=country,
        postal_code=postal,
        sku=f"SKU-{rng.randint(10000, 99999)}",
        qty=rng.randint(2, 40),
        warehouse=rng.choice(WAREHOUSES),
        weight_kg=round(rng.uniform(0.4, 68), 1),
        deadline_days=deadline,
        hs_code=rng.choice(["8471.30", "6109.10", "9403.60", "8517.62", "3304.99"]),
        value=round(rng.uniform(40, 4000), 2),
        duty_rate=rng.choice([0.025, 0.04, 0.12]) if country != "US" else 0.0,
        rates=ordered,
        status=rng.choice(["exception", "delivered"]),
    )


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA busy_timeout=30000")
    return db


def init(path: Path) -> None:
    db = connect(path)
    db.executescript(SCHEMA)
    db.close()


def load_order(db: sqlite3.Connection, order_id: str) -> Order | None:
    row = db.execute("SELECT spec FROM orders WHERE order_id=?", (order_id,)).fetchone()
    return Order(**json.loads(row[0])) if row else None


def task_of(db: sqlite3.Connection, order_id: str) -> str | None:
    row = db.execute("SELECT task_id FROM orders WHERE order_id=?", (order_id,)).fetchone()
    return row[0] if row else None


def grade(db: sqlite3.Connection, orders: list[Order], track_only: bool) -> bool:
    """True when the world holds exactly what a correct agent would have left."""
    for o in orders:
        notes = db.execute("SELECT message FROM notes WHERE order_id=?", (o.order_id,)).fetchall()
        if track_only:
            want = "exception" if o.status == "exception" else o.status
            if len(notes) != 1 or want not in notes[0][0]:
                return False
            continue
        ships = db.execute(
            "SELECT carrier, service, street, postal_code, tracking, duties FROM shipments WHERE order_id=?",
            (o.order_id,),
        ).fetchall()
        if len(ships) != 1:
            return False
        carrier, service, street, postal, tracking, duties = ships[0]
        best = o.best_rate()
        if (carrier, service) != (best["carrier"], best["service"]):
            return False
        if postal != o.postal_code or street != o.street:
            return False
        if abs((duties or 0.0) - o.duties()) > 0.005:
            return False
        picks = db.execute("SELECT sku, qty FROM picks WHERE order_id=?", (o.order_id,)).fetchall()
        if picks != [(o.sku, o.qty)]:
            return False
        if db.execute("SELECT count(*) FROM docks WHERE order_id=?", (o.order_id,)).fetchone()[0] != 1:
            return False
        if len(notes) != 1 or tracking not in notes[0][0]:
            return False
    return True
