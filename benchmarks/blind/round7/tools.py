"""The freight tools' real behaviour over the SQLite world, and how a scheduled form rewrites it.

Shared by the MCP server (``mcp_server``) and the local tools (``local_tools``): the tool really
runs and changes the world; a scheduled form only replaces what the agent is shown.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from benchmarks.blind.round7 import world
from benchmarks.blind.round7.forms import BY_NAME, Form


class ToolInputError(Exception):
    """The call's own arguments were unusable (the model's slip, not a fault)."""


def _rid(*parts: str) -> str:
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]


def _need(args: dict[str, Any], *names: str) -> None:
    missing = [n for n in names if args.get(n) in (None, "")]
    if missing:
        raise ToolInputError(f"missing required field(s): {', '.join(missing)}")


def run_tool(db: sqlite3.Connection, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Execute one tool for real; raise ToolInputError for arguments it cannot use."""
    _need(args, "order_id")
    order = world.load_order(db, str(args["order_id"]))
    if order is None:
        raise ToolInputError(f"unknown order_id {args['order_id']!r}")
    oid = order.order_id
    if name == "validate_address":
        _need(args, "street", "postal_code", "country")
        return {
            "address_id": "ADR-" + _rid(oid, "addr"),
            "deliverable": True,
            "dpv_match_code": "Y",
            "standardized": {
                "street": order.street,
                "city": order.city,
                "postal_code": order.postal_code,
                "country": order.country,
            },
        }
    if name == "check_inventory":
        _need(args, "sku", "warehouse")
        on_hand = order.qty + 13 + int(_rid(oid, "inv")[:2], 16) % 50
        return {
            "sku": order.sku,
            "warehouse": order.warehouse,
            "on_hand": on_hand,
            "allocatable": on_hand - 3,
            "bins": [f"{order.warehouse}-A{n:02d}" for n in (3, 7)],
        }
    if name == "calculate_duties":
        _need(args, "hs_code", "value", "country")
        return {
            "hs_code": order.hs_code,
            "country": order.country,
            "duty_rate": order.duty_rate,
            "duties": order.duties(),
            "currency": "USD",
        }
    if name == "rate_shop":
        _need(args, "postal_code", "weight_kg")
        return {"order_id": oid, "currency": "USD", "rates": [dict(r) for r in order.rates]}
    if name == "book_shipment":
        _need(args, "carrier", "service", "postal_code", "street")
        n = db.execute("SELECT count(*) FROM shipments WHERE order_id=?", (oid,)).fetchone()[0]
        tracking = str(7700_0000_0000 + int(_rid(oid, "trk", str(n))[:8], 16) % 10**11)
        db.execute(
            "INSERT INTO shipments VALUES (?,?,?,?,?,?,?)",
            (
                oid,
                args["carrier"],
                args["service"],
                args["street"],
                args["postal_code"],
                tracking,
                float(args.get("duties") or 0.0),
            ),
        )
        return {
            "tracking_number": tracking,
            "carrier": args["carrier"],
            "service": args["service"],
            "label_url": f"https://labels.example.com/{tracking}.pdf",
        }
    if name == "create_pick_list":
        _need(args, "sku", "qty", "warehouse")
        db.execute("INSERT INTO picks VALUES (?,?,?,?)", (oid, args["sku"], int(args["qty"]), args["warehouse"]))
        return {"pick_id": "PK-" + _rid(oid, "pick")[:8], "lines": 1, "status": "released"}
    if name == "schedule_dock":
        _need(args, "warehouse", "day")
        db.execute("INSERT INTO docks VALUES (?,?,?)", (oid, args["warehouse"], args["day"]))
        return {
            "appointment_id": "APT-" + _rid(oid, "dock")[:8],
            "door": 4 + int(_rid(oid)[:1], 16) % 9,
            "day": args["day"],
            "window": "08:00-10:00",
        }
    if name == "notify_customer":
        _need(args, "message")
        db.execute("INSERT INTO notes VALUES (?,?,?)", (oid, args.get("channel", "email"), args["message"]))
        return {"message_id": "MSG-" + _rid(oid, "msg")[:10], "status": "queued"}
    if name == "track_shipment":
        return {
            "order_id": oid,
            "status": order.status,
            "last_scan": "2026-12-05T21:14:00Z",
            "events": [
                {"code": "PU", "at": "2026-12-03T16:02:00Z"},
                {"code": "AR", "at": "2026-12-04T09:40:00Z"},
                {"code": "EX" if order.status == "exception" else "DL", "at": "2026-12-05T21:14:00Z"},
            ],
        }
    raise ToolInputError(f"unknown tool {name}")


def _bump(value: str) -> str:
    last = value[-1]
    return value[:-1] + (str((int(last) + 1) % 10) if last.isdigit() else chr(ord(last) + 1))


def _best_index(rates: list[dict[str, Any]], order: world.Order) -> int:
    best = order.best_rate()
    return next(i for i, r in enumerate(rates) if r["service"] == best["service"] and r["carrier"] == best["carrier"])


def _data(op: str, result: dict[str, Any], order: world.Order) -> Any:
    """The true result rewritten by one data form (wrong, stale, partial or renamed)."""
    r = json.loads(json.dumps(result))
    if op in ("rates_shift", "rates_stale"):
        best = r["rates"][_best_index(r["rates"], order)]
        other = r["rates"][0]
        other["amount"] = round(best["amount"] * 0.96, 2)
        if op == "rates_stale":
            r["quoted_at"] = "2026-11-21T08:00:00Z"
    elif op == "rates_swap":
        i = _best_index(r["rates"], order)
        a, b = r["rates"][0], r["rates"][i]
        a["carrier"], b["carrier"], a["service"], b["service"] = b["carrier"], a["carrier"], b["service"], a["service"]
    elif op == "zip_neighbor":
        r["standardized"]["postal_code"] = _bump(r["standardized"]["postal_code"])
    elif op == "duty_shift":
        r["duty_rate"] = round(r["duty_rate"] * 1.07, 4)
        r["duties"] = round(r["duties"] * 1.07, 2)
    elif op == "duty_stale":
        r["duty_rate"] = round(r["duty_rate"] + 0.01, 4)
        r["duties"] = round(order.value * r["duty_rate"], 2)
        r["tariff_schedule"] = "HTS 2025 Revision 1"
    elif op == "inv_shift":
        r["allocatable"] = max(0, order.qty - 1)
        r["on_hand"] = r["allocatable"] + 3
    elif op == "tracking_neighbor":
        r["tracking_number"] = _bump(r["tracking_number"])
        r["label_url"] = f"https://labels.example.com/{r['tracking_number']}.pdf"
    elif op == "stale_status":
        r["status"] = "in_transit"
        r["last_scan"] = "2026-12-04T09:40:00Z"
        r["events"] = r["events"][:2]
    elif op in ("rates_partial", "rates_total", "rates_es_partial", "rates_cutline"):
        i = _best_index(r["rates"], order)
        full = len(r["rates"])
        r["rates"] = [x for j, x in enumerate(r["rates"]) if j != i][:3]
        if op == "rates_partial":
            r["partial"] = True
        elif op == "rates_total":
            r["total"] = full
        elif op == "rates_es_partial":
            r["timed_out"] = True
            r["_shards"] = {"total": 5, "successful": 3, "skipped": 0, "failed": 2}
        else:
            r["warnings"] = [f"output truncated: showing 3 of {full} rates"]
    elif op == "rates_camel":
        r["rates"] = [
            {
                "carrierCode": x["carrier"],
                "serviceType": x["service"],
                "transitDays": x["transit_days"],
                "totalNetCharge": x["amount"],
            }
            for x in r["rates"]
        ]
    elif op == "rates_strings":
        for x in r["rates"]:
            x["amount"], x["transit_days"] = f"{x['amount']:.2f}", str(x["transit_days"])
    elif op == "inv_rename":
        r = {
            "ItemNumber": r["sku"],
            "InventoryWarehouseId": r["warehouse"],
            "OnHandQuantity": str(r["on_hand"]),
            "AvailableOnHandQuantity": str(r["allocatable"]),
        }
    elif op == "duty_rename":
        r = {
            "hsCode": r["hs_code"],
            "country": r["country"],
            "rate": str(r["duty_rate"]),
            "totalTax": str(r["duties"]),
            "currencyCode": "USD",
        }
    elif op == "addr_optional":
        r.pop("dpv_match_code", None)
        r["standardized"].pop("city", None)
    elif op == "inv_nobins":
        r["bins"] = []
    elif op == "track_noevents":
        r["events"] = []
    elif op == "track_rename":
        r["shipmentStatus"] = r.pop("status")
        r["latestScanAt"] = r.pop("last_scan")
    return r


def render(form: Form, tool: str, result: dict[str, Any], order: world.Order) -> tuple[str, bool]:
    """What the agent is shown under ``form``: (text, is_error)."""
    if form.kind in ("err", "raise"):
        text = form.text.replace("{rid}", _rid(order.order_id, tool, form.name)).replace("{order}", order.order_id)
        return text, form.is_error
    op = form.extra["op"]
    raw = json.dumps(result)
    if op == "json_cut":
        return raw[: max(8, int(len(raw) * 0.55))], False
    if op == "json_unbalanced":
        return raw[:-1] + "]}", False
    if op == "json_cut_string":
        quote = raw.find('"', int(len(raw) * 0.4))
        return raw[: quote + 4], False
    if op == "empty_obj":
        return "{}", False
    if op == "empty_arr":
        return "[]", False
    if op == "empty_str":
        return "", False
    if op == "null":
        return "null", False
    return json.dumps(_data(op, result, order)), False


def scheduled_form(db: sqlite3.Connection, task_id: str, tool: str, nth: int) -> Form | None:
    row = db.execute("SELECT form FROM faults WHERE task_id=? AND tool=? AND nth=?", (task_id, tool, nth)).fetchone()
    return BY_NAME[row[0]] if row else None


def record_fired(db: sqlite3.Connection, task_id: str, side: str, name: str, nth: int, form: str) -> None:
    db.execute("INSERT INTO fired VALUES (?,?,?,?,?)", (task_id, side, name, nth, form))
