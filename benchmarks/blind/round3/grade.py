"""Did the task succeed? Read from the world's final state and the posted reply only."""

from __future__ import annotations

from collections import Counter
from typing import Any

from benchmarks.blind.round3.policy import Task
from benchmarks.blind.round3.world import World, money


def _lines(world: World, oid: str) -> Counter[tuple[str, int]]:
    return Counter((ln["sku"], ln["qty"]) for ln in world.orders[oid]["lines"])


def expectations(task: Task, world: World) -> dict[str, Any]:
    """What success looks like, fixed before the episode runs."""
    if task.kind in ("fulfil", "refund"):
        order = world.orders[task.order_id]
        cust = world.customers[order["customer_id"]]
        return {"order_id": task.order_id, "total": world.total(task.order_id), "currency": order["currency"],
                "lines": Counter((ln["sku"], ln["qty"]) for ln in order["lines"]), "name": cust["name"],
                "email": cust["email"]}
    if task.kind == "batch":
        pending = world.pending()
        return {"pending": {oid: (world.total(oid), _lines(world, oid)) for oid in pending}}
    return {"figures": {sku: world.products[sku]["stock"] for sku in task.skus}}


def grade(task: Task, world: World, exp: dict[str, Any]) -> tuple[bool, str]:
    """(success, why not)."""
    reply = world.reply or ""
    new_charges = [c for c in world.charges if not c.get("seeded")]
    if task.kind == "fulfil":
        oid = exp["order_id"]
        charged = [(c["order_id"], c["amount_cents"], c["currency"]) for c in new_charges]
        if charged != [(oid, exp["total"], exp["currency"])]:
            return False, "charges"
        if Counter((r["sku"], r["qty"]) for r in world.reservations if r["order_id"] == oid) != exp["lines"] or \
                any(r["order_id"] != oid for r in world.reservations):
            return False, "reservations"
        if [s["order_id"] for s in world.shipments] != [oid]:
            return False, "shipments"
        tracking = world.shipments[0]["tracking_number"]
        mails = [m for m in world.emails
                 if m["to"] == exp["email"] and tracking in m["body"] and exp["name"] in m["body"]]
        if len(mails) != 1 or len(world.emails) != 1:
            return False, "email"
        if tracking not in reply or exp["name"] not in reply:
            return False, "reply"
        return True, ""
    if task.kind == "refund":
        oid = exp["order_id"]
        if new_charges or [(r["order_id"], r["amount_cents"]) for r in world.refunds] != [(oid, exp["total"])]:
            return False, "refunds"
        amount = money(exp["total"], exp["currency"])
        if len(world.emails) != 1 or world.emails[0]["to"] != exp["email"] or amount not in world.emails[0]["body"] \
                or exp["name"] not in world.emails[0]["body"]:
            return False, "email"
        if amount not in reply or exp["name"] not in reply:
            return False, "reply"
        return True, ""
    if task.kind == "batch":
        pending = exp["pending"]
        got = Counter((c["order_id"], c["amount_cents"]) for c in new_charges)
        if got != Counter((oid, total) for oid, (total, _) in pending.items()):
            return False, "charges"
        for oid, (_, lines) in pending.items():
            if Counter((r["sku"], r["qty"]) for r in world.reservations if r["order_id"] == oid) != lines:
                return False, "reservations"
        if any(r["order_id"] not in pending for r in world.reservations):
            return False, "reservations"
        if f"Processed {len(pending)} pending orders" not in reply:
            return False, "reply"
        return True, ""
    figures = exp["figures"]
    want = [f"{sku}: {n} units" for sku, n in figures.items()]
    if len(world.emails) != 1 or world.emails[0]["to"] != "ops@shop.example" or \
            any(w not in world.emails[0]["body"] for w in want):
        return False, "email"
    if any(w not in reply for w in want):
        return False, "reply"
    return True, ""
