"""The shop the agent operates: products, customers, orders, and what the tools did to them.

A task is graded only by this world's final state and by the reply the agent posts at the end
(the reply goes to the requester, so it is part of the outcome). Tools return the JSON a real
order service would; :func:`mutate` applies the data failure forms of :mod:`forms_tool`.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from typing import Any

NAMES = ["Ana Ortiz", "José Álvarez", "Zoë Müller", "Priya Natarajan", "François Lefèvre", "Liam O'Brien",
         "Søren Kjærgaard", "Mei Chen", "Łukasz Wójcik", "Grace Okafor", "Chloé Dubois", "Tomás Ruiz",
         "Ingrid Håkansson", "Kenji Watanabe", "Amélie Côté", "Noah Schmidt"]
PRODUCTS = ["USB-C hub", "Desk lamp", "Espresso grinder", "Trail backpack", "Noise-cancelling headset",
            "Standing mat", "Cast-iron pan", "Yoga block", "Label printer", "Water bottle", "Wool socks",
            "Mechanical keyboard", "Plant pot", "Bike light", "Tea kettle", "Notebook set"]
WAREHOUSES = ["WH-AMS", "WH-FRA", "WH-MAD"]


def money(cents: int, currency: str) -> str:
    return f"{currency} {cents // 100}.{cents % 100:02d}"


@dataclass
class World:
    products: dict[str, dict[str, Any]] = field(default_factory=dict)
    customers: dict[str, dict[str, Any]] = field(default_factory=dict)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    charges: list[dict[str, Any]] = field(default_factory=list)
    refunds: list[dict[str, Any]] = field(default_factory=list)
    reservations: list[dict[str, Any]] = field(default_factory=list)
    shipments: list[dict[str, Any]] = field(default_factory=list)
    emails: list[dict[str, Any]] = field(default_factory=list)
    reply: str | None = None
    rng: random.Random = field(default_factory=random.Random)

    # ---- building --------------------------------------------------------------------------
    @classmethod
    def build(cls, rng: random.Random, *, n_orders: int, accented: bool | None = None) -> World:
        w = cls(rng=random.Random(rng.random()))
        skus = rng.sample(range(1000, 9999), 12)
        for i, number in enumerate(skus):
            sku = f"SKU-{number}"
            w.products[sku] = {"name": PRODUCTS[i], "price_cents": rng.randrange(499, 18999),
                               "stock": rng.randrange(6, 60), "warehouse": rng.choice(WAREHOUSES)}
        names = list(NAMES)
        rng.shuffle(names)
        if accented is not None:  # some forms only show on a name outside ASCII
            names.sort(key=lambda n: (n.isascii() == accented))
        for i in range(6):
            cid = f"C-{rng.randrange(10000, 99999)}"
            first = names[i].split()[0].lower().encode("ascii", "ignore").decode() or "client"
            w.customers[cid] = {"name": names[i], "email": f"{first}.{cid[-3:]}@example.com",
                                "tier": rng.choice(["standard", "plus", "business"]),
                                "phone": f"+31 6 {rng.randrange(10000000, 99999999)}"}
        cids = list(w.customers)
        base = rng.randrange(1000, 8000)
        for i in range(n_orders + 3):
            oid = f"ORD-{base + i}"
            picked = rng.sample(list(w.products), rng.choice([1, 1, 2, 2, 3]))
            lines = [{"sku": s, "qty": rng.randrange(1, 4)} for s in picked]
            w.orders[oid] = {"customer_id": cids[0] if i == 0 else rng.choice(cids), "lines": lines,
                             "status": "pending" if i < n_orders else "paid",
                             "currency": rng.choice(["EUR", "EUR", "USD", "GBP"]),
                             "created_at": f"2026-03-{rng.randrange(1, 28):02d}T{rng.randrange(7, 20):02d}:"
                                           f"{rng.randrange(60):02d}:00Z"}
        for oid, order in w.orders.items():
            if order["status"] == "paid":
                w.charges.append({"charge_id": f"ch_{oid}", "order_id": oid, "amount_cents": w.total(oid),
                                  "currency": order["currency"], "seeded": True})
        return w

    def total(self, oid: str) -> int:
        return sum(self.products[line["sku"]]["price_cents"] * line["qty"] for line in self.orders[oid]["lines"])

    def pending(self) -> list[str]:
        return [oid for oid, o in self.orders.items() if o["status"] == "pending"]

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{self.rng.randrange(16**10):010x}"

    # ---- the tools (what the service really answers) -----------------------------------------
    def get_order(self, order_id: str) -> dict[str, Any]:
        order = self.orders.get(order_id)
        if order is None:
            return {"error": {"code": "order_not_found", "message": f"No order with id {order_id}"}}
        return {"order_id": order_id, "customer_id": order["customer_id"], "status": order["status"],
                "currency": order["currency"], "created_at": order["created_at"],
                "lines": [{"sku": ln["sku"], "name": self.products[ln["sku"]]["name"], "qty": ln["qty"],
                           "unit_price_cents": self.products[ln["sku"]]["price_cents"]} for ln in order["lines"]]}

    def get_customer(self, customer_id: str) -> dict[str, Any]:
        c = self.customers.get(customer_id)
        if c is None:
            return {"error": {"code": "customer_not_found", "message": f"No customer with id {customer_id}"}}
        return {"customer_id": customer_id, **c}

    def check_stock(self, sku: str) -> dict[str, Any]:
        p = self.products.get(sku)
        if p is None:
            return {"error": {"code": "unknown_sku", "message": f"Unknown SKU {sku}"}}
        return {"sku": sku, "available": p["stock"], "warehouse": p["warehouse"], "as_of": "2026-03-02T10:00:00Z"}

    def reserve_stock(self, sku: str, qty: int, order_id: str) -> dict[str, Any]:
        p = self.products.get(sku)
        if p is None or order_id not in self.orders:
            return {"error": {"code": "invalid_reference", "message": f"Unknown SKU {sku} or order {order_id}"}}
        if not isinstance(qty, int) or qty <= 0 or qty > p["stock"]:
            return {"error": {"code": "insufficient_stock", "message": f"Cannot reserve {qty} of {sku}"}}
        p["stock"] -= qty
        res = {"reservation_id": self._id("res"), "sku": sku, "qty": qty, "order_id": order_id,
               "warehouse": p["warehouse"]}
        self.reservations.append(res)
        return res

    def charge_payment(self, order_id: str, amount_cents: int, currency: str) -> dict[str, Any]:
        if order_id not in self.orders:
            return {"error": {"code": "order_not_found", "message": f"No order with id {order_id}"}}
        charge = {"charge_id": self._id("ch"), "order_id": order_id, "amount_cents": amount_cents,
                  "currency": currency, "status": "succeeded"}
        self.charges.append(charge)
        self.orders[order_id]["status"] = "paid"
        return {k: v for k, v in charge.items()}

    def refund_payment(self, order_id: str, amount_cents: int) -> dict[str, Any]:
        if order_id not in self.orders:
            return {"error": {"code": "order_not_found", "message": f"No order with id {order_id}"}}
        refund = {"refund_id": self._id("re"), "order_id": order_id, "amount_cents": amount_cents,
                  "status": "succeeded"}
        self.refunds.append(refund)
        self.orders[order_id]["status"] = "refunded"
        return dict(refund)

    def create_shipment(self, order_id: str, warehouse: str) -> dict[str, Any]:
        if order_id not in self.orders:
            return {"error": {"code": "order_not_found", "message": f"No order with id {order_id}"}}
        ship = {"shipment_id": self._id("shp"), "order_id": order_id, "warehouse": warehouse,
                "tracking_number": f"1Z{self.rng.randrange(10**9, 10**10)}", "carrier": "UPS"}
        self.shipments.append(ship)
        self.orders[order_id]["status"] = "shipped"
        return dict(ship)

    def send_email(self, to: str, subject: str, body: str) -> dict[str, Any]:
        if "@" not in str(to):
            return {"error": {"code": "invalid_recipient", "message": f"Invalid recipient {to!r}"}}
        msg = {"message_id": self._id("msg"), "to": to, "subject": subject, "body": body, "status": "queued"}
        self.emails.append(msg)
        return {"message_id": msg["message_id"], "status": "queued"}

    def list_orders(self, status: str = "pending", limit: int = 50) -> dict[str, Any]:
        ids = [oid for oid, o in self.orders.items() if o["status"] == status][:limit]
        return {"orders": [{"order_id": oid, "customer_id": self.orders[oid]["customer_id"],
                            "total_cents": self.total(oid)} for oid in ids], "count": len(ids)}

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy({"orders": self.orders, "products": self.products})


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.title() for p in rest)


LEGACY = {"available": "qty_on_hand", "email": "email_address", "lines": "items", "qty": "quantity",
          "orders": "results", "unit_price_cents": "price", "order_id": "id", "customer_id": "customer",
          "total_cents": "total"}


def _rekey(value: Any, fn: Any) -> Any:
    if isinstance(value, dict):
        return {fn(k): _rekey(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_rekey(v, fn) for v in value]
    return value


def _stringify(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stringify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stringify(v) for v in value]
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def mutate(how: str, result: dict[str, Any], world: World, tool: str, rng: random.Random) -> str:
    """The text the agent is shown when data form ``how`` hits ``result`` (the real answer)."""
    r = copy.deepcopy(result)
    arrays = [k for k in ("lines", "orders") if isinstance(r.get(k), list)]
    if how.startswith("cut:") or how in ("cut_colon", "unbalanced"):
        text = json.dumps(r, ensure_ascii=False)
        if how == "unbalanced":
            return text[:-1] if text.endswith("}") else text + "}"
        if how == "cut_colon":
            at = text.find('": ', len(text) // 3)
            return text[: at + 3] if at > 0 else text[: len(text) // 2]
        frac = float(how.split(":")[1])
        cut = max(2, min(len(text) - 2, int(len(text) * frac)))
        return text[:cut]
    if how in ("partial_flag", "es_partial", "incomplete_results", "halve"):
        key = arrays[0]
        full = len(r[key])
        r[key] = r[key][: max(1, full // 2)]
        if key == "orders":
            r["count"] = len(r["orders"])
        if how == "partial_flag":
            r["partial"] = True
        elif how == "es_partial":
            r["timed_out"] = True
            r["_shards"] = {"total": 4, "successful": 2, "skipped": 0, "failed": 2}
        elif how == "incomplete_results":
            r["incomplete_results"] = True
            r["total_count"] = full
        return json.dumps(r, ensure_ascii=False)
    if how == "camel":
        return json.dumps(_rekey(r, _camel), ensure_ascii=False)
    if how == "legacy":
        return json.dumps(_rekey(r, lambda k: LEGACY.get(k, k)), ensure_ascii=False)
    if how == "stringify":
        return json.dumps(_stringify(r), ensure_ascii=False)
    if how == "price_shift":
        for line in r["lines"]:
            line["unit_price_cents"] = int(round(line["unit_price_cents"] * (1 + rng.choice([0.03, 0.05, 0.08]))))
        return json.dumps(r, ensure_ascii=False)
    if how == "qty_shift":
        r["lines"][0]["qty"] += 1
        return json.dumps(r, ensure_ascii=False)
    if how == "stock_low":
        r["available"] = 0
        r["as_of"] = "2026-02-27T04:00:00Z"
        return json.dumps(r, ensure_ascii=False)
    if how == "other_email":
        others = [c["email"] for cid, c in world.customers.items() if cid != r["customer_id"]]
        r["email"] = rng.choice(others)
        return json.dumps(r, ensure_ascii=False)
    if how == "tracking_swap":
        t = r["tracking_number"]
        r["tracking_number"] = t[:2] + t[3:] + t[2]
        if r["tracking_number"] == t:
            r["tracking_number"] = t[:-1] + str((int(t[-1]) + 1) % 10)
        return json.dumps(r, ensure_ascii=False)
    if how == "neighbour_id":
        first = r["orders"][0]
        number = int(first["order_id"].split("-")[1])
        candidates = [oid for oid in world.orders if oid not in {o["order_id"] for o in r["orders"]}]
        near = min(candidates, key=lambda oid: abs(int(oid.split("-")[1]) - number))
        first["order_id"] = near
        return json.dumps(r, ensure_ascii=False)
    raise ValueError(f"unknown mutation {how}")
