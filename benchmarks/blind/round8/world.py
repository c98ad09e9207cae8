"""The desk's world: one SQLite database per episode, its tools' real behaviour, and the grader.

A task succeeds only when the world's final state is what the ticket asked for, so a wrong value
the agent used, a skipped step or a duplicated refund fails it however the agent's answer reads.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any

FIRST = ["José", "Amelia", "Noah", "Zoë", "Priya", "Mateo", "Chen", "Léa", "Omar", "Ingrid", "Kofi", "Sofía"]
LAST = ["Núñez", "Hart", "Okafor", "Brandt", "Iyer", "Rossi", "Wang", "Moreau", "Haddad", "Berg", "Mensah", "Ortiz"]
SERVICES = ["billing-api", "sso-gateway", "webhooks", "mobile-sync", "reporting"]
TOPICS = ["password-reset", "invoice-download", "two-factor", "export-csv", "webhook-retry",
          "seat-transfer", "api-keys", "data-retention", "sso-setup", "mobile-login"]
KB = [(1000 + i * 7, t, f"How to handle {t.replace('-', ' ')}") for i, t in enumerate(TOPICS)] + [
    (1100, "refund-damaged", "Refunds for damaged or defective items"),
    (1107, "refund-late", "Refunds for late deliveries"),
    (1114, "service-credit", "Service credits for downtime"),
    (1121, "outage-runbook", "Customer-facing outage runbook"),
]
TOOL_REQUIRED: dict[str, tuple[str, ...]] = {
    "get_ticket": ("ticket_id",), "get_customer": ("email",), "lookup_order": ("order_id",),
    "get_subscription": ("customer_id",), "search_kb": ("query",),
    "issue_refund": ("order_id", "amount_cents", "reason"), "apply_credit": ("customer_id", "amount_cents", "reason"),
    "send_email": ("to", "subject", "body"), "send_sms": ("phone", "body"),
    "update_ticket": ("ticket_id", "status", "note"), "page_oncall": ("service", "severity", "summary"),
    "schedule_csat": ("ticket_id", "channel"),
}


class ToolFailure(Exception):
    """A tool's own refusal (bad argument, unknown id): its text is what the agent is shown."""


@dataclass
class Task:
    kind: str                      # refund | outage | credit | queue
    ticket_ids: list[str]
    prompt: str
    expect: dict[str, Any] = field(default_factory=dict)


def _schema(db: sqlite3.Connection) -> None:
    db.executescript("""
    create table customers(id text primary key, name text, email text, phone text, tier text);
    create table orders(id text primary key, customer_id text, total_cents int, item text, status text);
    create table subscriptions(customer_id text primary key, plan text, monthly_cents int, renews_on text);
    create table tickets(id text primary key, email text, kind text, order_id text, service text,
                         months int, topic text, status text, note text);
    create table refunds(id integer primary key, order_id text, amount_cents int, reason text);
    create table credits(id integer primary key, customer_id text, amount_cents int, reason text);
    create table emails(id integer primary key, to_addr text, subject text, body text);
    create table sms(id integer primary key, phone text, body text);
    create table pages(id integer primary key, service text, severity text, summary text);
    create table csat(id integer primary key, ticket_id text, channel text);
    """)


class World:
    """One episode's desk: customers, orders, subscriptions, tickets and everything the tools did."""

    def __init__(self, rng: random.Random, kind: str, queue_len: int = 0) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.lock = threading.Lock()
        _schema(self.db)
        base = rng.randrange(10, 90) * 100
        self.customers = []
        for i in range(6):
            cid = f"C-{base + i * 3}"
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            email = f"{name.split()[0].lower().encode('ascii', 'ignore').decode()}.{base + i}@example-mail.com"
            phone = f"+1415555{base % 1000 + i:04d}"
            tier = rng.choice(["enterprise", "business", "starter"])
            self.customers.append((cid, name, email, phone, tier))
            self.db.execute("insert into customers values (?,?,?,?,?)", (cid, name, email, phone, tier))
            oid = f"O-{base * 10 + i * 11}"
            self.db.execute("insert into orders values (?,?,?,?,?)",
                            (oid, cid, rng.randrange(1500, 40000), rng.choice(["headset", "dock", "router", "webcam"]),
                             "delivered"))
            self.db.execute("insert into subscriptions values (?,?,?,?)",
                            (cid, rng.choice(["team", "pro", "scale"]), rng.choice([2900, 4900, 9900, 19900]),
                             f"2027-0{rng.randrange(1, 9)}-1{rng.randrange(0, 9)}"))
        self.tickets: list[str] = []
        n = queue_len if kind == "queue" else 1
        for j in range(n):
            cust = self.customers[rng.randrange(6)] if kind == "queue" else self.customers[rng.randrange(6)]
            tid = f"T-{base * 10 + 500 + j}"
            order = self.db.execute("select id from orders where customer_id=?", (cust[0],)).fetchone()[0]
            self.db.execute("insert into tickets values (?,?,?,?,?,?,?,?,?)",
                            (tid, cust[2], kind, order, rng.choice(SERVICES), rng.randrange(1, 4),
                             rng.choice(TOPICS), "open", ""))
            self.tickets.append(tid)

    # ---- reads -------------------------------------------------------------------------
    def q(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.db.execute(sql, args).fetchall()

    def get_ticket(self, ticket_id: str) -> dict[str, Any]:
        rows = self.q("select id,email,kind,order_id,service,months,topic,status from tickets where id=?", ticket_id)
        if not rows:
            raise ToolFailure(f"ticket {ticket_id} not found")
        tid, email, kind, order, service, months, topic, status = rows[0]
        out: dict[str, Any] = {"ticket_id": tid, "requester_email": email, "status": status, "channel": "email"}
        if kind == "refund":
            out.update(subject=f"Order {order} arrived damaged", order_id=order)
        elif kind == "outage":
            out.update(subject=f"{service} is down for our whole team", service=service)
        elif kind == "credit":
            out.update(subject=f"Asking for a credit: {months} months of degraded service", months_affected=months)
        else:
            out.update(subject=f"Question about {topic.replace('-', ' ')}", topic=topic)
        return out

    def get_customer(self, email: str) -> dict[str, Any]:
        rows = self.q("select id,name,email,phone,tier from customers where email=?", email)
        if not rows:
            raise ToolFailure(f"no customer with email {email}")
        cid, name, mail, phone, tier = rows[0]
        return {"customer_id": cid, "name": name, "email": mail, "phone": phone, "tier": tier,
                "entitlements": {"priority_support": tier == "enterprise", "sla_hours": {"enterprise": 1,
                                                                                        "business": 8}.get(tier, 24)}}

    def lookup_order(self, order_id: str) -> dict[str, Any]:
        rows = self.q("select id,customer_id,total_cents,item,status from orders where id=?", order_id)
        if not rows:
            raise ToolFailure(f"order {order_id} not found")
        oid, cid, total, item, status = rows[0]
        return {"order_id": oid, "customer_id": cid, "total_cents": total, "currency": "USD", "item": item,
                "status": status}

    def get_subscription(self, customer_id: str) -> dict[str, Any]:
        rows = self.q("select plan,monthly_cents,renews_on from subscriptions where customer_id=?", customer_id)
        if not rows:
            raise ToolFailure(f"no subscription for {customer_id}")
        plan, monthly, renews = rows[0]
        return {"customer_id": customer_id, "plan": plan, "monthly_cents": monthly, "renews_on": renews,
                "status": "active"}

    def search_kb(self, query: str) -> dict[str, Any]:
        words = set(query.lower().replace("-", " ").split())
        scored = []
        for aid, topic, title in KB:
            score = len(words & set(topic.split("-"))) * 2 + len(words & set(title.lower().split()))
            if score:
                scored.append((score, aid, topic, title))
        scored.sort(key=lambda r: (-r[0], r[1]))
        hits = [{"article_id": f"KB-{aid}", "topic": topic, "title": title, "score": score}
                for score, aid, topic, title in scored[:5]]
        return {"query": query, "total": len(hits), "hits": hits}

    # ---- writes ------------------------------------------------------------------------
    def _insert(self, sql: str, *args: Any) -> int:
        with self.lock:
            cur = self.db.execute(sql, args)
            return int(cur.lastrowid or 0)

    def issue_refund(self, order_id: str, amount_cents: int, reason: str) -> dict[str, Any]:
        self.lookup_order(order_id)
        if not isinstance(amount_cents, int) or amount_cents <= 0:
            raise ToolFailure("amount_cents must be a positive integer")
        rid = self._insert("insert into refunds(order_id,amount_cents,reason) values (?,?,?)", order_id,
                           amount_cents, reason)
        return {"refund_id": f"RF-{order_id[2:]}-{rid}", "order_id": order_id, "amount_cents": amount_cents,
                "state": "succeeded"}

    def apply_credit(self, customer_id: str, amount_cents: int, reason: str) -> dict[str, Any]:
        self.get_subscription(customer_id)
        if not isinstance(amount_cents, int) or amount_cents <= 0:
            raise ToolFailure("amount_cents must be a positive integer")
        cid = self._insert("insert into credits(customer_id,amount_cents,reason) values (?,?,?)", customer_id,
                           amount_cents, reason)
        return {"credit_note_id": f"CN-{cid:05d}", "customer_id": customer_id, "amount_cents": amount_cents}

    def send_email(self, to: str, subject: str, body: str) -> dict[str, Any]:
        if "@" not in to or not to.isascii():
            raise ToolFailure(f"invalid recipient address: {to}")
        mid = self._insert("insert into emails(to_addr,subject,body) values (?,?,?)", to, subject, body)
        return {"message_id": f"<desk-{mid}@mail.example-desk.com>", "accepted": [to]}

    def send_sms(self, phone: str, body: str) -> dict[str, Any]:
        if not phone.startswith("+") or not phone[1:].isdigit():
            raise ToolFailure(f"invalid phone number: {phone}")
        sid = self._insert("insert into sms(phone,body) values (?,?)", phone, body)
        return {"sid": f"SM{sid:032d}", "status": "queued", "to": phone}

    def update_ticket(self, ticket_id: str, status: str, note: str) -> dict[str, Any]:
        self.get_ticket(ticket_id)
        if status not in ("open", "pending", "solved"):
            raise ToolFailure(f"status must be open, pending or solved, not {status}")
        with self.lock:
            self.db.execute("update tickets set status=?, note=note || ? where id=?", (status, note + "\n", ticket_id))
        return {"ticket_id": ticket_id, "status": status, "updated": True}

    def page_oncall(self, service: str, severity: str, summary: str) -> dict[str, Any]:
        if service not in SERVICES:
            raise ToolFailure(f"unknown service {service}")
        pid = self._insert("insert into pages(service,severity,summary) values (?,?,?)", service, severity, summary)
        return {"incident_id": f"INC-{4000 + pid}", "service": service, "severity": severity, "status": "triggered"}

    def schedule_csat(self, ticket_id: str, channel: str) -> dict[str, Any]:
        self.get_ticket(ticket_id)
        sid = self._insert("insert into csat(ticket_id,channel) values (?,?)", ticket_id, channel)
        return {"survey_id": f"CSAT-{sid}", "ticket_id": ticket_id, "channel": channel}

    def call(self, tool: str, args: dict[str, Any]) -> str:
        """Run a tool as its API would: a JSON answer, or :class:`ToolFailure` with the API's text."""
        fn = getattr(self, tool, None)
        if tool not in TOOL_REQUIRED or fn is None:
            raise ToolFailure(f"unknown tool {tool}")
        missing = [k for k in TOOL_REQUIRED[tool] if k not in args]
        if missing:
            raise ToolFailure(f"missing required argument(s): {', '.join(missing)}")
        extra = [k for k in args if k not in TOOL_REQUIRED[tool]]
        if extra:
            raise ToolFailure(f"unexpected argument(s): {', '.join(extra)}")
        return json.dumps(fn(**args), ensure_ascii=False)


# ---- the truth each task is graded against ---------------------------------------------
def kb_for(topic: str) -> str:
    return next(f"KB-{aid}" for aid, t, _ in KB if t == topic)


def make_task(world: World) -> Task:
    kind = world.q("select kind from tickets limit 1")[0][0]
    tids = world.tickets
    if kind == "queue":
        prompt = (f"Work the how-to queue: tickets {', '.join(tids)}. For each one, read it, find the matching "
                  "knowledge-base article, email the requester a reply citing the article id, and mark the "
                  "ticket solved with the article id in the note.")
    elif kind == "refund":
        prompt = (f"Handle ticket {tids[0]}: the customer's order arrived damaged. Refund the order in full per "
                  "the damaged-item policy, email the customer the refund id, solve the ticket citing the policy "
                  "article, and send a CSAT survey by email.")
    elif kind == "outage":
        prompt = (f"Handle ticket {tids[0]}: a customer reports an outage. Page on-call for the affected service "
                  "(severity SEV1 for enterprise customers, SEV3 otherwise), text the customer the incident id, "
                  "and set the ticket to pending citing the outage runbook article.")
    else:
        prompt = (f"Handle ticket {tids[0]}: the customer asks for a service credit. Credit one month's "
                  "subscription price per affected month, email the customer the credit note id, solve the "
                  "ticket citing the service-credit article, and send a CSAT survey by SMS.")
    return Task(kind=kind, ticket_ids=list(tids), prompt=prompt)


def grade(world: World, task: Task) -> tuple[bool, str]:
    """Whether the world ended as the task asked; the reason when it did not."""
    problems: list[str] = []
    for tid in task.ticket_ids:
        _, email, kind, order, service, months, topic, status, note = world.q(
            "select * from tickets where id=?", tid)[0]
        cust = world.q("select id,name,email,phone,tier from customers where email=?", email)[0]
        emails = [b for (b,) in world.q("select body from emails where to_addr=?", email)]
        if kind == "queue":
            art = kb_for(topic)
            if status != "solved" or art not in note:
                problems.append(f"{tid} not solved with {art}")
            if len([b for b in emails if tid in b]) != 1 or not any(art in b for b in emails if tid in b):
                problems.append(f"{tid}: reply email missing, duplicated or without {art}")
        elif kind == "refund":
            total = world.q("select total_cents from orders where id=?", order)[0][0]
            refunds = world.q("select order_id, amount_cents from refunds")
            if refunds != [(order, total)]:
                problems.append(f"refunds {refunds} != {[(order, total)]}")
            if len(emails) != 1 or status != "solved" or kb_for("refund-damaged") not in note:
                problems.append("email / ticket state wrong")
            if world.q("select ticket_id, channel from csat") != [(tid, "email")]:
                problems.append("csat wrong")
        elif kind == "outage":
            sev = "SEV1" if cust[4] == "enterprise" else "SEV3"
            if world.q("select service, severity from pages") != [(service, sev)]:
                problems.append("page wrong")
            if [p for (p,) in world.q("select phone from sms")] != [cust[3]]:
                problems.append("sms wrong")
            if status != "pending" or kb_for("outage-runbook") not in note:
                problems.append("ticket state wrong")
        else:
            monthly = world.q("select monthly_cents from subscriptions where customer_id=?", cust[0])[0][0]
            if world.q("select customer_id, amount_cents from credits") != [(cust[0], monthly * months)]:
                problems.append("credit wrong")
            if len(emails) != 1 or status != "solved" or kb_for("service-credit") not in note:
                problems.append("email / ticket state wrong")
            if world.q("select ticket_id, channel from csat") != [(tid, "sms")]:
                problems.append("csat wrong")
    return (not problems, "; ".join(problems))
