"""The small world the agent works in: an online shop's back office.

Ten tools over seeded data (orders, customers, products, stock, FX rates, shipments, invoices,
tickets, refunds, a Kubernetes deployment), the task kinds the agent is given, and the grader.
Everything is generated from a ``random.Random`` the caller seeds; nothing here reads a clock.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FIRST = [
    "Ava",
    "Liam",
    "Zoë",
    "José",
    "Søren",
    "Chloé",
    "Mateo",
    "Ingrid",
    "Noah",
    "Amélie",
    "Björn",
    "Lucía",
    "Oliver",
    "Mia",
    "Ethan",
    "Hannah",
    "François",
    "Yuki",
    "Priya",
    "Omar",
    "Renée",
    "Jörg",
]
LAST = [
    "Müller",
    "Álvarez",
    "Jensen",
    "Dubois",
    "Rossi",
    "Nakamura",
    "Kowalski",
    "Okafor",
    "Lindqvist",
    "García",
    "Smith",
    "Novák",
    "Brennan",
    "Haddad",
    "Costa",
    "Ivanova",
    "Schröder",
    "Moreau",
    "Patel",
    "Wright",
    "Ångström",
    "Peña",
]
ADJ = [
    "Trailhead",
    "Summit",
    "Harbor",
    "Granite",
    "Aurora",
    "Cedar",
    "Nomad",
    "Polar",
    "Ridge",
    "Tidal",
    "Ember",
    "Falcon",
    "Glacier",
    "Meadow",
    "Canyon",
]
NOUN = [
    "Backpack",
    "Jacket",
    "Lantern",
    "Tent",
    "Bottle",
    "Stove",
    "Hammock",
    "Headlamp",
    "Sleeping Bag",
    "Trekking Poles",
    "Fleece",
    "Cooler",
    "Duffel",
    "Rain Shell",
    "Camp Chair",
]
WAREHOUSES = ["AMS-1", "DAL-2", "SIN-3", "FRA-4", "YYZ-5"]
EUR_RATES = {"USD": 0.9213, "GBP": 1.1694, "CAD": 0.6791, "JPY": 0.006137, "CHF": 1.0432, "EUR": 1.0}
CARRIERS = ["DHL", "UPS", "FedEx", "PostNL", "DPD"]
BASE_DAY = dt.date(2024, 9, 2)


def ascii_fold(s: str) -> str:
    table = str.maketrans(
        {
            "ö": "o",
            "ü": "u",
            "ä": "a",
            "é": "e",
            "è": "e",
            "á": "a",
            "í": "i",
            "ø": "o",
            "å": "a",
            "Å": "A",
            "ç": "c",
            "ñ": "n",
            "ë": "e",
            "Ö": "O",
            "Ü": "U",
            "É": "E",
            "Á": "A",
            "Ø": "O",
            "ß": "ss",
            "ó": "o",
            "ú": "u",
        }
    )
    return s.translate(table)


@dataclass
class World:
    customers: dict[str, dict[str, Any]]
    products: dict[str, dict[str, Any]]
    inventory: dict[tuple[str, str], dict[str, Any]]
    orders: dict[str, dict[str, Any]]
    shipments: dict[str, list[dict[str, Any]]]
    invoices: dict[str, dict[str, Any]]
    deployments: dict[tuple[str, str], dict[str, Any]]
    tickets: list[dict[str, Any]] = field(default_factory=list)
    refunds: list[dict[str, Any]] = field(default_factory=list)
    counter: int = 0

    def fresh(self) -> World:
        """A copy whose mutable parts (tickets, refunds) start empty: one per episode."""
        w = copy.copy(self)
        w.tickets, w.refunds, w.counter = [], [], 0
        return w


def build_world(rng: random.Random) -> World:
    customers: dict[str, dict[str, Any]] = {}
    cids = rng.sample(range(2100, 2999), 60)
    for i, n in enumerate(cids):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        cid = f"CUS-{n}"
        domain = rng.choice(["example.com", "mail.example.net", "corp.example.org"])
        email = f"{ascii_fold(first).lower()}.{ascii_fold(last).lower()}{i % 7 or ''}@{domain}"
        customers[cid] = {
            "customer_id": cid,
            "name": f"{first} {last}",
            "email": email,
            "tier": rng.choice(["standard", "plus", "business"]),
            "city": rng.choice(["Rotterdam", "Lyon", "Austin", "Osaka", "Malmö", "Porto", "Zürich"]),
            "created_at": (BASE_DAY - dt.timedelta(days=rng.randint(30, 900))).isoformat(),
        }
    products: dict[str, dict[str, Any]] = {}
    names = set()
    while len(products) < 40:
        name = f"{rng.choice(ADJ)} {rng.choice(NOUN)}"
        if name in names:
            continue
        names.add(name)
        sku = f"SKU-{rng.randint(10000, 99999)}"
        if sku in products:
            continue
        products[sku] = {"sku": sku, "name": name, "price": round(rng.uniform(12, 480), 2), "currency": "USD"}
    inventory = {}
    for sku in products:
        for wh in WAREHOUSES:
            on_hand = rng.randint(0, 420)
            inventory[(sku, wh)] = {
                "sku": sku,
                "warehouse": wh,
                "on_hand": on_hand,
                "reserved": rng.randint(0, on_hand // 3),
                "updated_at": f"2024-09-0{rng.randint(1, 9)}T0{rng.randint(0, 9)}:1{rng.randint(0, 9)}:00Z",
            }
    orders: dict[str, dict[str, Any]] = {}
    shipments: dict[str, list[dict[str, Any]]] = {}
    invoices: dict[str, dict[str, Any]] = {}
    skus = list(products)
    oids = rng.sample(range(10200, 19999), 140)
    cid_list = list(customers)
    for n in oids:
        oid = f"ORD-{n}"
        cur = rng.choice(["USD", "USD", "USD", "GBP", "CAD", "JPY", "CHF"])
        items = []
        for sku in rng.sample(skus, rng.randint(1, 3)):
            price = products[sku]["price"]
            if cur == "JPY":
                price = float(round(price * 150))
            items.append({"sku": sku, "qty": rng.randint(1, 4), "unit_price": price})
        total = round(sum(i["qty"] * i["unit_price"] for i in items), 2)
        placed = BASE_DAY - dt.timedelta(days=rng.randint(1, 40))
        orders[oid] = {
            "order_id": oid,
            "customer_id": rng.choice(cid_list),
            "status": rng.choice(["processing", "shipped", "delivered"]),
            "placed_at": placed.isoformat(),
            "currency": cur,
            "items": items,
            "total": total,
        }
        ships = []
        for _ in range(rng.randint(2, 4)):
            eta = placed + dt.timedelta(days=rng.randint(3, 18))
            ships.append(
                {
                    "tracking": f"{rng.choice(CARRIERS)[:2].upper()}{rng.randint(10**9, 10**10 - 1)}",
                    "carrier": rng.choice(CARRIERS),
                    "status": rng.choice(["in_transit", "label_created", "out_for_delivery"]),
                    "eta": eta.isoformat(),
                }
            )
        shipments[oid] = ships
        invoices[oid] = {
            "invoice_id": f"INV-{n + 50000}",
            "order_id": oid,
            "amount_due": total,
            "currency": cur,
            "issued_on": (placed + dt.timedelta(days=1)).isoformat(),
            "storage_key": f"s3://acme-billing-invoices/{placed.year}/{placed.month:02d}/INV-{n + 50000}.json",
        }
    deployments = {}
    for ns in ["shop-prod", "shop-staging"]:
        for name in ["checkout", "cart", "search-api", "payments", "notifications"]:
            replicas = rng.choice([2, 3, 4, 6])
            ready = replicas if rng.random() < 0.6 else rng.randint(0, replicas - 1)
            deployments[(ns, name)] = {
                "name": name,
                "namespace": ns,
                "replicas": replicas,
                "ready_replicas": ready,
                "updated_replicas": ready,
                "image": f"registry.example.com/{name}:1.{rng.randint(10, 40)}.{rng.randint(0, 9)}",
            }
    return World(customers, products, inventory, orders, shipments, invoices, deployments)


# --------------------------------------------------------------------------------------------- tools


class ToolFailure(Exception):
    """A failure the real backend reports (not a fault: e.g. an id that does not exist)."""


def make_tools(world: World) -> dict[str, Callable[..., dict[str, Any]]]:
    """The real tool implementations over ``world``; each returns a JSON-able dict or raises."""

    def lookup_order(order_id: str) -> dict[str, Any]:
        o = world.orders.get(order_id)
        if o is None:
            raise ToolFailure(f"order {order_id!r} not found")
        return copy.deepcopy(o)

    def get_customer(customer_id: str) -> dict[str, Any]:
        c = world.customers.get(customer_id)
        if c is None:
            raise ToolFailure(f"customer {customer_id!r} not found")
        return dict(c)

    def search_products(query: str) -> dict[str, Any]:
        words = [w.lower() for w in re.findall(r"[A-Za-z]+", query)]
        scored = []
        for p in world.products.values():
            pw = [w.lower() for w in re.findall(r"[A-Za-z]+", p["name"])]
            s = sum(1.0 for w in words if w in pw)
            if s:
                scored.append((s + (0.5 if all(w in pw for w in words) else 0.0), p))
        scored.sort(key=lambda t: (-t[0], t[1]["sku"]))
        hits = [
            {"_index": "products-v3", "_id": p["sku"], "_score": round(2.1 * s, 4), "_source": dict(p)}
            for s, p in scored[:6]
        ]
        return {
            "took": 4 + len(hits),
            "timed_out": False,
            "_shards": {"total": 3, "successful": 3, "skipped": 0, "failed": 0},
            "hits": {
                "total": {"value": len(hits), "relation": "eq"},
                "max_score": hits[0]["_score"] if hits else None,
                "hits": hits,
            },
        }

    def check_inventory(sku: str, warehouse: str) -> dict[str, Any]:
        r = world.inventory.get((sku, warehouse))
        if r is None:
            raise ToolFailure(f"no stock record for {sku} in {warehouse}")
        return dict(r)

    def get_exchange_rate(base: str, quote: str) -> dict[str, Any]:
        if base not in EUR_RATES or quote not in EUR_RATES:
            raise ToolFailure(f"unsupported currency pair {base}/{quote}")
        return {
            "base": base,
            "quote": quote,
            "rate": round(EUR_RATES[base] / EUR_RATES[quote], 6),
            "as_of": "2024-09-02",
        }

    def create_ticket(customer_id: str, subject: str, priority: str) -> dict[str, Any]:
        if customer_id not in world.customers:
            raise ToolFailure(f"customer {customer_id!r} not found")
        world.counter += 1
        t = {
            "ticket_id": f"TCK-{40210 + 7 * world.counter + len(world.tickets)}",
            "status": "open",
            "customer_id": customer_id,
            "subject": subject,
            "priority": priority,
            "created_at": "2024-09-02T10:14:03Z",
        }
        world.tickets.append(t)
        return dict(t)

    def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
        o = world.orders.get(order_id)
        if o is None:
            raise ToolFailure(f"order {order_id!r} not found")
        world.counter += 1
        r = {
            "refund_id": f"re_3Pq{world.counter}Lk{order_id[-4:]}x",
            "order_id": order_id,
            "amount": float(amount),
            "currency": o["currency"],
            "status": "succeeded",
        }
        world.refunds.append(r)
        return dict(r)

    def list_shipments(order_id: str) -> dict[str, Any]:
        s = world.shipments.get(order_id)
        if s is None:
            raise ToolFailure(f"order {order_id!r} not found")
        return {"total_count": len(s), "incomplete_results": False, "items": copy.deepcopy(s)}

    def get_invoice(order_id: str) -> dict[str, Any]:
        inv = world.invoices.get(order_id)
        if inv is None:
            raise ToolFailure(f"no invoice for {order_id!r}")
        return dict(inv)

    def get_deployment(namespace: str, name: str) -> dict[str, Any]:
        d = world.deployments.get((namespace, name))
        if d is None:
            raise ToolFailure(f"deployment {namespace}/{name} not found")
        return dict(d)

    return {
        f.__name__: f
        for f in (
            lookup_order,
            get_customer,
            search_products,
            check_inventory,
            get_exchange_rate,
            create_ticket,
            issue_refund,
            list_shipments,
            get_invoice,
            get_deployment,
        )
    }


def _fn(name: str, desc: str, props: dict[str, tuple[str, str]]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": desc,
            "parameters": {
                "type": "object",
                "properties": {k: {"type": t, "description": d} for k, (t, d) in props.items()},
                "required": list(props),
                "additionalProperties": False,
            },
        },
    }


TOOL_SCHEMAS = [
    _fn(
        "lookup_order",
        "Fetch an order from the order service. Returns {order_id, customer_id, status, placed_at, currency, "
        "items[{sku, qty, unit_price}], total}.",
        {"order_id": ("string", "Order id, e.g. ORD-12345")},
    ),
    _fn(
        "get_customer",
        "Fetch a customer profile. Returns {customer_id, name, email, tier, city, created_at}.",
        {"customer_id": ("string", "Customer id, e.g. CUS-2345")},
    ),
    _fn(
        "search_products",
        "Full-text product search (Elasticsearch). Returns the search response; products are in hits.hits[]._source "
        "{sku, name, price, currency}.",
        {"query": ("string", "Search words")},
    ),
    _fn(
        "check_inventory",
        "Stock level of one SKU in one warehouse. Returns {sku, warehouse, on_hand, reserved, updated_at}; available "
        "= on_hand - reserved.",
        {"sku": ("string", "SKU"), "warehouse": ("string", "Warehouse code, e.g. AMS-1")},
    ),
    _fn(
        "get_exchange_rate",
        "FX rate. Returns {base, quote, rate, as_of}; amount_in_quote = amount_in_base * rate.",
        {"base": ("string", "ISO currency"), "quote": ("string", "ISO currency")},
    ),
    _fn(
        "create_ticket",
        "Open a support ticket (not idempotent). Returns {ticket_id, status, customer_id, priority, created_at}.",
        {
            "customer_id": ("string", "Customer id"),
            "subject": ("string", "Ticket subject"),
            "priority": ("string", "low | normal | high"),
        },
    ),
    _fn(
        "issue_refund",
        "Refund an order (not idempotent). Returns {refund_id, order_id, amount, currency, status}.",
        {"order_id": ("string", "Order id"), "amount": ("number", "Amount in the order currency")},
    ),
    _fn(
        "list_shipments",
        "Shipments of an order from the carrier aggregator. Returns {total_count, incomplete_results, "
        "items[{tracking, carrier, status, eta}]}.",
        {"order_id": ("string", "Order id")},
    ),
    _fn(
        "get_invoice",
        "Invoice document of an order (object storage). Returns {invoice_id, order_id, amount_due, currency, "
        "issued_on, storage_key}.",
        {"order_id": ("string", "Order id")},
    ),
    _fn(
        "get_deployment",
        "Kubernetes deployment status. Returns {name, namespace, replicas, ready_replicas, updated_replicas, image}.",
        {"namespace": ("string", "Namespace"), "name": ("string", "Deployment name")},
    ),
]
TOOL_PARAMS = {s["function"]["name"]: list(s["function"]["parameters"]["properties"]) for s in TOOL_SCHEMAS}


# --------------------------------------------------------------------------------------------- tasks


@dataclass
class Item:
    """One thing the model has to fetch: a tool call and the fields it reads from the result."""

    key: str
    tool: str
    args: dict[str, Any]
    reads: list[tuple[str, str, str]]  # (fact name, documented field path, kind: num|str|list|hits)
    entity_key: str | None = None  # a field that identifies the entity (for lenient reading)


def fmt_money(x: float) -> str:
    return f"{x:,.2f}"


class Task:
    kind = "base"
    aggregate = False  # items are independent: a failed item can be skipped
    json_answer = False

    def __init__(self, world: World, rng: random.Random) -> None:
        self.world = world

    # The plan: the next items to fetch given the facts so far (None: ready to answer).
    def next_items(self, facts: dict[str, Any], settled: set[str]) -> list[Item] | None:
        raise NotImplementedError

    def answer(self, facts: dict[str, Any], skipped: list[str]) -> str:
        raise NotImplementedError

    def check(self, final: str | None, world: World) -> bool:
        raise NotImplementedError

    def prompt(self) -> str:
        raise NotImplementedError

    @staticmethod
    def _first_unsettled(items: list[Item], settled: set[str]) -> list[Item] | None:
        for it in items:
            if it.key not in settled:
                return [it]
        return None


class OrderTotalEUR(Task):
    kind = "order_total_eur"

    def __init__(self, world, rng):
        super().__init__(world, rng)
        self.order_id = rng.choice([o for o, v in world.orders.items() if v["currency"] != "EUR"])
        self.json_answer = rng.random() < 0.35

    def prompt(self):
        tail = (
            ' Reply with a JSON object {"order_id": ..., "total_eur": ...} and nothing else.'
            if self.json_answer
            else " Give the amount rounded to 2 decimals."
        )
        return f"What is the total of order {self.order_id} in euros?{tail}"

    def next_items(self, facts, settled):
        if "order" not in settled:
            return [
                Item(
                    "order",
                    "lookup_order",
                    {"order_id": self.order_id},
                    [("total", "total", "num"), ("currency", "currency", "str")],
                    "order_id",
                )
            ]
        if "currency" not in facts or "rate" in settled:
            return None
        return [
            Item(
                "rate",
                "get_exchange_rate",
                {"base": facts["currency"], "quote": "EUR"},
                [("rate", "rate", "num")],
                "base",
            )
        ]

    def expected(self) -> float:
        o = self.world.orders[self.order_id]
        return round(o["total"] * EUR_RATES[o["currency"]], 2)

    def answer(self, facts, skipped):
        if "total" not in facts or "rate" not in facts:
            return None
        v = round(facts["total"] * facts["rate"], 2)
        if self.json_answer:
            return json.dumps({"order_id": self.order_id, "total_eur": v})
        return f"Order {self.order_id} comes to {fmt_money(v)} EUR."

    def check(self, final, world):
        if not final:
            return False
        exp = self.expected()
        if self.json_answer:
            try:
                obj = json.loads(final)
                return isinstance(obj, dict) and abs(float(obj.get("total_eur")) - exp) < 0.006
            except Exception:
                return False
        return fmt_money(exp) in final or f"{exp:.2f}" in final


class OrderContact(Task):
    kind = "order_contact"

    def __init__(self, world, rng):
        super().__init__(world, rng)
        self.order_id = rng.choice(list(world.orders))

    def prompt(self):
        return f"Who placed order {self.order_id}? Give their full name and email address."

    def next_items(self, facts, settled):
        if "order" not in settled:
            return [
                Item(
                    "order",
                    "lookup_order",
                    {"order_id": self.order_id},
                    [("customer_id", "customer_id", "str")],
                    "order_id",
                )
            ]
        if "customer_id" not in facts or "customer" in settled:
            return None
        return [
            Item(
                "customer",
                "get_customer",
                {"customer_id": facts["customer_id"]},
                [("name", "name", "str"), ("email", "email", "str")],
                "customer_id",
            )
        ]

    def answer(self, facts, skipped):
        if "name" not in facts or "email" not in facts:
            return None
        return f"Order {self.order_id} was placed by {facts['name']} ({facts['email']})."

    def check(self, final, world):
        c = world.customers[world.orders[self.order_id]["customer_id"]]
        return bool(final) and c["email"] in final and c["name"] in final


class StockAvailable(Task):
    kind = "stock"

    def __init__(self, world, rng):
        super().__init__(world, rng)
        # a product whose two-word name is shared in part by others (so the search has distractors)
        self.sku = rng.choice(list(world.products))
        self.query = world.products[self.sku]["name"]
        self.whs = rng.sample(WAREHOUSES, 2)
        self.parallel = rng.random() < 0.5

    def prompt(self):
        return (
            f'How many units of the "{self.query}" are available (on hand minus reserved) across warehouses '
            f"{self.whs[0]} and {self.whs[1]} combined?"
        )

    def next_items(self, facts, settled):
        if "search" not in settled:
            return [Item("search", "search_products", {"query": self.query}, [("sku", "hits.hits", "hits")])]
        if "sku" not in facts:
            return None
        inv = [
            Item(
                f"inv:{wh}",
                "check_inventory",
                {"sku": facts["sku"], "warehouse": wh},
                [(f"on_hand:{wh}", "on_hand", "num"), (f"reserved:{wh}", "reserved", "num")],
                "sku",
            )
            for wh in self.whs
        ]
        todo = [i for i in inv if i.key not in settled]
        if not todo:
            return None
        return todo if self.parallel else todo[:1]

    def expected(self):
        return sum(
            self.world.inventory[(self.sku, wh)]["on_hand"] - self.world.inventory[(self.sku, wh)]["reserved"]
            for wh in self.whs
        )

    def answer(self, facts, skipped):
        total = 0
        for wh in self.whs:
            if f"on_hand:{wh}" not in facts:
                return None
            total += facts[f"on_hand:{wh}"] - facts.get(f"reserved:{wh}", 0)
        return (
            f"Across {self.whs[0]} and {self.whs[1]} combined, the {self.query} has {int(total)} units available "
            f"(on hand minus reserved)."
        )

    def check(self, final, world):
        return bool(final) and re.search(rf"(?<![\d,]){self.expected()}(?![\d,])", final) is not None


class OpenTicket(Task):
    kind = "ticket"

    def __init__(self, world, rng):
        super().__init__(world, rng)
        self.order_id = rng.choice(list(world.orders))
        self.priority = rng.choice(["high", "normal"])
        name = world.customers[world.orders[self.order_id]["customer_id"]]["name"]
        self.subject = (
            f"{rng.choice(['Late delivery', 'Damaged item', 'Wrong size delivered', 'Missing parcel'])} — "
            f"{name} ({self.order_id})"
        )

    def prompt(self):
        return (
            f"Open a {self.priority}-priority support ticket for the customer who placed order {self.order_id}, "
            f'subject "{self.subject}", and tell me the ticket id.'
        )

    def next_items(self, facts, settled):
        if "order" not in settled:
            return [
                Item(
                    "order",
                    "lookup_order",
                    {"order_id": self.order_id},
                    [("customer_id", "customer_id", "str")],
                    "order_id",
                )
            ]
        if "customer_id" not in facts:
            return None
        if "ticket" not in settled:
            return [
                Item(
                    "ticket",
                    "create_ticket",
                    {"customer_id": facts["customer_id"], "subject": self.subject, "priority": self.priority},
                    [("ticket_id", "ticket_id", "str")],
                    "ticket_id",
                )
            ]
        return None

    def answer(self, facts, skipped):
        if "ticket_id" not in facts:
            return None
        return f"Your {self.priority}-priority ticket for order {self.order_id} has been opened: {facts['ticket_id']}."

    def check(self, final, world):
        cid = world.orders[self.order_id]["customer_id"]
        mine = [t for t in world.tickets if t["customer_id"] == cid or self.order_id in t["subject"]]
        return (
            bool(final)
            and len(mine) == 1
            and mine[0]["customer_id"] == cid
            and mine[0]["subject"] == self.subject
            and mine[0]["priority"] == self.priority
            and mine[0]["ticket_id"] in final
        )


class RefundOrder(Task):
    kind = "refund"

    def __init__(self, world, rng):
        super().__init__(world, rng)
        self.order_id = rng.choice(list(world.orders))

    def prompt(self):
        return f"Order {self.order_id} was cancelled. Refund its full total and give me the refund id."

    def next_items(self, facts, settled):
        if "order" not in settled:
            return [Item("order", "lookup_order", {"order_id": self.order_id}, [("total", "total", "num")], "order_id")]
        if "total" not in facts:
            return None
        if "refund" not in settled:
            return [
                Item(
                    "refund",
                    "issue_refund",
                    {"order_id": self.order_id, "amount": facts["total"]},
                    [("refund_id", "refund_id", "str")],
                    "refund_id",
                )
            ]
        return None

    def answer(self, facts, skipped):
        if "refund_id" not in facts:
            return None
        return (
            f"The refund for order {self.order_id} has been issued: {facts['refund_id']} ({fmt_money(facts['total'])})."
        )

    def check(self, final, world):
        mine = [r for r in world.refunds if r["order_id"] == self.order_id]
        return (
            bool(final)
            and len(mine) == 1
            and abs(mine[0]["amount"] - world.orders[self.order_id]["total"]) < 0.005
            and mine[0]["refund_id"] in final
        )


class LatestETA(Task):
    kind = "eta"

    def __init__(self, world, rng):
        super().__init__(world, rng)
        self.order_id = rng.choice(list(world.orders))

    def prompt(self):
        return (
            f"Order {self.order_id} ships in several parcels. By which date should the last parcel arrive? "
            f"Answer "
            f"with the date (YYYY-MM-DD)."
        )

    def next_items(self, facts, settled):
        if "ship" not in settled:
            return [Item("ship", "list_shipments", {"order_id": self.order_id}, [("etas", "items", "etas")])]
        return None

    def answer(self, facts, skipped):
        if not facts.get("etas"):
            return None
        return f"The last parcel of {self.order_id} is expected on {max(facts['etas'])}."

    def check(self, final, world):
        return bool(final) and max(s["eta"] for s in world.shipments[self.order_id]) in final


class InvoiceDue(Task):
    kind = "invoice"

    def __init__(self, world, rng):
        super().__init__(world, rng)
        self.order_id = rng.choice(list(world.orders))

    def prompt(self):
        return f"How much is due on the invoice for order {self.order_id}, and in which currency?"

    def next_items(self, facts, settled):
        if "invoice" not in settled:
            return [
                Item(
                    "invoice",
                    "get_invoice",
                    {"order_id": self.order_id},
                    [("amount_due", "amount_due", "num"), ("currency", "currency", "str")],
                    "invoice_id",
                )
            ]
        return None

    def answer(self, facts, skipped):
        if "amount_due" not in facts:
            return None
        return (
            f"The invoice for {self.order_id} shows {fmt_money(facts['amount_due'])} {facts.get('currency', '')} due."
        )

    def check(self, final, world):
        inv = world.invoices[self.order_id]
        return bool(final) and fmt_money(inv["amount_due"]) in final and inv["currency"] in final


class Rollout(Task):
    kind = "rollout"

    def __init__(self, world, rng):
        super().__init__(world, rng)
        self.ns, self.name = rng.choice(list(world.deployments))

    def prompt(self):
        return f"Is the {self.name} deployment in namespace {self.ns} fully rolled out? Tell me ready/desired replicas."

    def next_items(self, facts, settled):
        if "deploy" not in settled:
            return [
                Item(
                    "deploy",
                    "get_deployment",
                    {"namespace": self.ns, "name": self.name},
                    [("ready", "ready_replicas", "num"), ("replicas", "replicas", "num")],
                    "name",
                )
            ]
        return None

    def answer(self, facts, skipped):
        if "ready" not in facts or "replicas" not in facts:
            return None
        r, d = int(facts["ready"]), int(facts["replicas"])
        return (
            f"The {self.name} deployment in {self.ns} has {r}/{d} replicas ready — "
            f"{'fully rolled out' if r == d else 'not fully rolled out'}."
        )

    def check(self, final, world):
        d = world.deployments[(self.ns, self.name)]
        return bool(final) and f"{d['ready_replicas']}/{d['replicas']}" in final


# ---- long (aggregate) tasks: one item per order/sku; a failed item can be skipped by the model


class AuditTotals(Task):
    kind = "audit_totals"
    aggregate = True

    def __init__(self, world, rng, n: int = 16):
        super().__init__(world, rng)
        usd = [o for o, v in world.orders.items() if v["currency"] == "USD"]
        self.order_ids = rng.sample(usd, n)

    def prompt(self):
        return (
            "Month-end check: add up the totals (USD) of these orders and give me the sum: "
            + ", ".join(self.order_ids)
            + "."
        )

    def item_keys(self):
        return [f"order:{o}" for o in self.order_ids]

    def items(self):
        return [
            Item(f"order:{o}", "lookup_order", {"order_id": o}, [(f"total:{o}", "total", "num")], "order_id")
            for o in self.order_ids
        ]

    def next_items(self, facts, settled):
        return self._first_unsettled(self.items(), settled)

    def answer(self, facts, skipped):
        s = sum(facts[f"total:{o}"] for o in self.order_ids if f"total:{o}" in facts)
        miss = [o for o in self.order_ids if f"total:{o}" not in facts]
        note = f" ({len(miss)} order(s) could not be retrieved: {', '.join(miss)})" if miss else ""
        return f"The {len(self.order_ids) - len(miss)} orders add up to {fmt_money(s)} USD{note}."

    def check(self, final, world):
        exp = round(sum(world.orders[o]["total"] for o in self.order_ids), 2)
        return bool(final) and fmt_money(exp) in final


class AuditContacts(Task):
    kind = "audit_contacts"
    aggregate = True

    def __init__(self, world, rng, n: int = 8):
        super().__init__(world, rng)
        self.order_ids = rng.sample(list(world.orders), n)

    def prompt(self):
        return (
            "For a delivery survey I need the email address of the customer behind each of these orders: "
            + ", ".join(self.order_ids)
            + ". List order -> email."
        )

    def item_keys(self):
        return [f"order:{o}" for o in self.order_ids]

    def next_items(self, facts, settled):
        for o in self.order_ids:
            if f"order:{o}" not in settled:
                return [
                    Item(
                        f"order:{o}", "lookup_order", {"order_id": o}, [(f"cid:{o}", "customer_id", "str")], "order_id"
                    )
                ]
            if f"cid:{o}" in facts and f"cust:{o}" not in settled:
                return [
                    Item(
                        f"cust:{o}",
                        "get_customer",
                        {"customer_id": facts[f"cid:{o}"]},
                        [(f"email:{o}", "email", "str")],
                        "customer_id",
                    )
                ]
        return None

    def answer(self, facts, skipped):
        lines = []
        for o in self.order_ids:
            lines.append(f"{o} -> {facts.get(f'email:{o}', 'unavailable')}")
        return "\n".join(lines)

    def check(self, final, world):
        if not final:
            return False
        for o in self.order_ids:
            if f"{o} -> {world.customers[world.orders[o]['customer_id']]['email']}" not in final:
                return False
        return True


class StockSweep(Task):
    kind = "stock_sweep"
    aggregate = True

    def __init__(self, world, rng, n: int = 8):
        super().__init__(world, rng)
        self.skus = rng.sample(list(world.products), n)
        self.whs = rng.sample(WAREHOUSES, 2)

    def prompt(self):
        return (
            f"Replenishment check: total available units (on hand minus reserved) of SKUs {', '.join(self.skus)} "
            f"summed over warehouses {self.whs[0]} and {self.whs[1]}."
        )

    def item_keys(self):
        return [f"inv:{s}:{wh}" for s in self.skus for wh in self.whs]

    def next_items(self, facts, settled):
        for s in self.skus:
            for wh in self.whs:
                k = f"inv:{s}:{wh}"
                if k not in settled:
                    return [
                        Item(
                            k,
                            "check_inventory",
                            {"sku": s, "warehouse": wh},
                            [(f"on_hand:{s}:{wh}", "on_hand", "num"), (f"reserved:{s}:{wh}", "reserved", "num")],
                            "sku",
                        )
                    ]
        return None

    def answer(self, facts, skipped):
        tot = 0
        for s in self.skus:
            for wh in self.whs:
                if f"on_hand:{s}:{wh}" in facts:
                    tot += facts[f"on_hand:{s}:{wh}"] - facts.get(f"reserved:{s}:{wh}", 0)
        note = f" ({len(skipped)} stock record(s) could not be read)" if skipped else ""
        return (
            f"Summed over {len(self.skus)} SKUs in {self.whs[0]} and {self.whs[1]}, {int(tot)} units are "
            f"available{note}."
        )

    def check(self, final, world):
        exp = sum(
            world.inventory[(s, wh)]["on_hand"] - world.inventory[(s, wh)]["reserved"]
            for s in self.skus
            for wh in self.whs
        )
        return bool(final) and re.search(rf"(?<![\d,]){exp}(?![\d,])", final) is not None


SHORT_KINDS = [OrderTotalEUR, OrderContact, StockAvailable, OpenTicket, RefundOrder, LatestETA, InvoiceDue, Rollout]
LONG_KINDS = [AuditTotals, AuditContacts, StockSweep]


# tools registered for each task kind (the agent is scoped to its area, as deployed agents usually are)
TASK_TOOLS = {
    "order_total_eur": ["lookup_order", "get_exchange_rate", "get_invoice", "list_shipments"],
    "order_contact": ["lookup_order", "get_customer", "list_shipments", "create_ticket"],
    "stock": ["search_products", "check_inventory", "lookup_order"],
    "ticket": ["lookup_order", "get_customer", "create_ticket", "list_shipments"],
    "refund": ["lookup_order", "issue_refund", "get_invoice", "get_customer"],
    "eta": ["list_shipments", "lookup_order", "get_customer"],
    "invoice": ["get_invoice", "lookup_order", "get_exchange_rate"],
    "rollout": ["get_deployment"],
    "audit_totals": ["lookup_order", "get_invoice", "get_exchange_rate"],
    "audit_contacts": ["lookup_order", "get_customer"],
    "stock_sweep": ["check_inventory", "search_products"],
}
