"""The accounts-payable world: a SQLite ledger the tools read and write, seeded per episode, graded at the end.

A file (not memory) because the ERP tools run in an MCP server subprocess and the bank, FX and
messaging tools run in the agent's process: both sides see one ledger, as an ERP and its
integrations would.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS vendors (id TEXT PRIMARY KEY, name TEXT, country TEXT, currency TEXT,
    remittance_email TEXT, ap_contact TEXT, terms TEXT);
CREATE TABLE IF NOT EXISTS invoices (id TEXT PRIMARY KEY, vendor_id TEXT, currency TEXT, net_amount REAL,
    tax_amount REAL, amount REAL, po TEXT, issued TEXT, due TEXT, status TEXT);
CREATE TABLE IF NOT EXISTS bank_txns (id TEXT PRIMARY KEY, account TEXT, booked TEXT, amount REAL,
    currency TEXT, ref TEXT, counterparty TEXT);
CREATE TABLE IF NOT EXISTS fx_rates (currency TEXT, day TEXT, rate REAL);
CREATE TABLE IF NOT EXISTS payments (invoice_id TEXT, bank_txn_id TEXT, amount_eur REAL);
CREATE TABLE IF NOT EXISTS remittances (vendor_id TEXT, invoice_id TEXT, email TEXT, payee_name TEXT,
    amount_eur REAL);
CREATE TABLE IF NOT EXISTS exceptions (invoice_id TEXT, reason TEXT);
CREATE TABLE IF NOT EXISTS chaos (tool TEXT, ordinal INTEGER, form TEXT);
CREATE TABLE IF NOT EXISTS calls (tool TEXT PRIMARY KEY, n INTEGER);
CREATE TABLE IF NOT EXISTS fired (tool TEXT, ordinal INTEGER, form_id TEXT);
"""
TABLES = (
    "vendors",
    "invoices",
    "bank_txns",
    "fx_rates",
    "payments",
    "remittances",
    "exceptions",
    "chaos",
    "calls",
    "fired",
)

VENDOR_NAMES = [
    ("Müller Präzision GmbH", "DE", "EUR"),
    ("Société Générale Fournitures SARL", "FR", "EUR"),
    ("Nordvik Maskin AS", "NO", "NOK"),
    ("Kowalski Logistyka Sp. z o.o.", "PL", "PLN"),
    ("Brightwater Components Ltd", "GB", "GBP"),
    ("Hartley & Søn ApS", "DK", "DKK"),
    ("Cascadia Fasteners Inc.", "US", "USD"),
    ("Zürcher Feinmechanik AG", "CH", "CHF"),
    ("Ibérica Envases S.L.", "ES", "EUR"),
    ("Tanaka Seimitsu K.K.", "JP", "JPY"),
    ("Van den Berg Verpakking B.V.", "NL", "EUR"),
    ("Öztürk Tekstil A.Ş.", "TR", "EUR"),
]
RATES = {
    "EUR": 1.0,
    "NOK": 11.62,
    "PLN": 4.31,
    "GBP": 0.8452,
    "DKK": 7.4589,
    "USD": 1.0871,
    "CHF": 0.9418,
    "JPY": 161.37,
}


@dataclass
class Task:
    """One reconciliation job: which vendor, which account and period, and what a correct run leaves."""

    task_id: str
    vendor_id: str
    account: str
    date_from: str
    date_to: str
    invoice_ids: list[str]
    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    expected: dict[str, Any] = field(default_factory=dict)

    def prompt(self) -> str:
        return (
            f"Reconcile the open invoices of vendor {self.vendor_id} against bank account {self.account} "
            f"for {self.date_from}..{self.date_to}. For each open invoice find the outgoing bank payment "
            "whose reference is the invoice id, post the payment in EUR (convert foreign-currency invoices "
            "at the ECB rate of the payment's booking day), and send the vendor a remittance advice to its "
            "remittance email (its AP contact if it has none). Finish with a summary whose last line is "
            "'Status: COMPLETE' when every invoice is done."
        )


def make_task(
    task_id: str,
    rng: random.Random,
    n_invoices: int,
    foreign: bool | None = None,
    nonascii: bool | None = None,
    email: bool | None = None,
) -> Task:
    """A vendor with ``n_invoices`` open invoices, each paid once from the account in the period."""
    pool = [
        v
        for v in VENDOR_NAMES
        if (foreign is None or (v[2] != "EUR") == foreign) and (nonascii is None or (not v[0].isascii()) == nonascii)
    ]
    name, country, currency = pool[rng.randrange(len(pool))]
    vendor_id = f"V{rng.randrange(10000, 99999)}"
    has_email = rng.random() > 0.25 if email is None else email
    slug = name.split()[0].lower().encode("ascii", "ignore").decode() or "vendor"
    email = f"remittance@{slug}.example" if has_email else None
    contact = f"ap@{slug}.example"
    account = rng.choice(["DE44500105175407324931", "DE89370400440532013000", "NL91ABNA0417164300"])
    month = rng.randrange(1, 12)
    date_from, date_to = f"2026-{month:02d}-01", f"2026-{month:02d}-28"
    rows: dict[str, list[tuple[Any, ...]]] = {k: [] for k in TABLES}
    rows["vendors"].append(
        (vendor_id, name, country, currency, email, contact, rng.choice(["NET30", "NET45", "2/10 NET30"]))
    )
    expected: dict[str, Any] = {"payments": {}, "remittances": {}}
    inv_ids: list[str] = []
    base = rng.randrange(20000, 90000)
    fx: dict[tuple[str, str], float] = {}
    for k in range(n_invoices):
        inv = f"INV-{base + k * rng.randrange(3, 40)}"
        while inv in inv_ids:
            inv = inv + "1"
        inv_ids.append(inv)
        net = round(rng.uniform(180, 24000), 2)
        tax = round(net * rng.choice([0.19, 0.2, 0.21, 0.25, 0.07]), 2)
        gross = round(net + tax, 2)
        day = f"2026-{month:02d}-{rng.randrange(2, 27):02d}"
        rows["invoices"].append(
            (
                inv,
                vendor_id,
                currency,
                net,
                tax,
                gross,
                f"PO-{rng.randrange(400000, 499999)}",
                f"2026-{max(1, month - 1):02d}-{rng.randrange(1, 28):02d}",
                day,
                "open",
            )
        )
        txn = f"TX{rng.randrange(10**9, 10**10)}"
        rows["bank_txns"].append((txn, account, day, -gross, currency, inv, name))
        rate = 1.0
        if currency != "EUR":
            if (currency, day) not in fx:
                fx[(currency, day)] = round(RATES[currency] * rng.uniform(0.97, 1.03), 4)
            rate = fx[(currency, day)]
            prev = f"2026-{month:02d}-{int(day[-2:]) - 1:02d}"
            if (currency, prev) not in fx:
                fx[(currency, prev)] = round(rate * rng.uniform(0.985, 1.015), 4)
        eur = round(gross / rate, 2)
        expected["payments"][inv] = (txn, eur)
        expected["remittances"][inv] = (email or contact, name, eur)
    rows["fx_rates"] += [(c, d, r) for (c, d), r in sorted(fx.items())]
    # noise: other vendors' invoices, unrelated bank lines, a paid invoice of this vendor
    for _ in range(rng.randrange(2, 5)):
        other = f"INV-{rng.randrange(10000, 19999)}"
        rows["invoices"].append(
            (
                other,
                f"V{rng.randrange(10000, 99999)}",
                "EUR",
                100.0,
                19.0,
                119.0,
                "PO-1",
                "2026-01-01",
                "2026-01-30",
                "open",
            )
        )
        rows["bank_txns"].append(
            (
                f"TX{rng.randrange(10**9, 10**10)}",
                account,
                f"2026-{month:02d}-{rng.randrange(2, 27):02d}",
                -round(rng.uniform(50, 9000), 2),
                "EUR",
                f"SEPA-{rng.randrange(10**6, 10**7)}",
                "Stadtwerke",
            )
        )
    rows["invoices"].append(
        (f"INV-{base - 7}", vendor_id, currency, 50.0, 0.0, 50.0, "PO-2", "2025-12-01", "2025-12-30", "paid")
    )
    return Task(task_id, vendor_id, account, date_from, date_to, inv_ids, rows, expected)


class Ledger:
    """The SQLite file both sides of the tools use; one episode's world at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with self.connect() as db:
            db.executescript(SCHEMA)

    def connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30, isolation_level=None)

    def load(self, task: Task, chaos: list[tuple[str, int, dict[str, Any]]]) -> None:
        """Replace the world with ``task``'s and arm the server-side faults (tool, per-tool ordinal, form)."""
        with self.connect() as db:
            db.execute("BEGIN")
            for t in TABLES:
                db.execute(f"DELETE FROM {t}")
            for t, rows in task.rows.items():
                for r in rows:
                    db.execute(f"INSERT INTO {t} VALUES ({','.join('?' * len(r))})", r)
            for tool, ordinal, form in chaos:
                db.execute("INSERT INTO chaos VALUES (?,?,?)", (tool, ordinal, json.dumps(form)))
            db.execute("COMMIT")

    def grade(self, task: Task, final: str | None) -> tuple[bool, str]:
        """Success only when every invoice is paid once, right, with one right remittance, and the run ended."""
        with self.connect() as db:
            pays = db.execute("SELECT invoice_id, bank_txn_id, amount_eur FROM payments").fetchall()
            rems = db.execute("SELECT invoice_id, email, payee_name, amount_eur FROM remittances").fetchall()
        if final is None:
            return False, "the run did not end with an answer"
        if not final.rstrip().endswith("Status: COMPLETE"):
            return False, "the summary does not end with Status: COMPLETE"
        if len(pays) != len(task.expected["payments"]) or len(rems) != len(task.expected["remittances"]):
            return False, f"{len(pays)} payments and {len(rems)} remittances for {len(task.invoice_ids)} invoices"
        for inv, txn, eur in pays:
            want = task.expected["payments"].get(inv)
            if want is None or want[0] != txn or abs(want[1] - eur) > 0.011:
                return False, f"payment of {inv} is wrong"
        for inv, email, payee, eur in rems:
            want = task.expected["remittances"].get(inv)
            if want is None or want[0] != email or want[1] != payee or abs(want[2] - eur) > 0.011:
                return False, f"remittance of {inv} is wrong"
        return True, "ok"

    def fired(self) -> list[tuple[str, int, str]]:
        with self.connect() as db:
            return db.execute("SELECT tool, ordinal, form_id FROM fired ORDER BY rowid").fetchall()


def next_ordinal(db: sqlite3.Connection, tool: str) -> int:
    """This tool's call number in the episode (0-based), counted where the tool runs."""
    row = db.execute("SELECT n FROM calls WHERE tool=?", (tool,)).fetchone()
    n = 0 if row is None else row[0] + 1
    db.execute("INSERT OR REPLACE INTO calls VALUES (?,?)", (tool, n))
    return n


def armed(db: sqlite3.Connection, tool: str, ordinal: int) -> dict[str, Any] | None:
    row = db.execute("SELECT form FROM chaos WHERE tool=? AND ordinal=?", (tool, ordinal)).fetchone()
    if row is None:
        return None
    form = json.loads(row[0])
    db.execute("INSERT INTO fired VALUES (?,?,?)", (tool, ordinal, form["id"]))
    return form
