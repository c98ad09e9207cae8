"""The eight accounts-payable tools, and how an armed form changes what one of them answers.

The same functions run in the MCP server subprocess (the ERP tools) and in the agent's process
(bank, FX, messaging, exceptions), both over the SQLite ledger. A tool really runs (unless the form
says the failure came before it ran); only what the caller is shown is replaced.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

MCP_TOOLS = ("search_invoices", "get_invoice", "post_payment", "get_vendor")
LOCAL_TOOLS = ("list_bank_transactions", "get_fx_rate", "send_remittance", "record_exception")

PARAMS: dict[str, dict[str, str]] = {
    "search_invoices": {"vendor_id": "string", "status": "string"},
    "get_invoice": {"invoice_id": "string"},
    "post_payment": {"invoice_id": "string", "bank_txn_id": "string", "amount_eur": "number"},
    "get_vendor": {"vendor_id": "string"},
    "list_bank_transactions": {"account": "string", "date_from": "string", "date_to": "string"},
    "get_fx_rate": {"currency": "string", "date": "string"},
    "send_remittance": {
        "vendor_id": "string",
        "invoice_id": "string",
        "email": "string",
        "payee_name": "string",
        "amount_eur": "number",
    },
    "record_exception": {"invoice_id": "string", "reason": "string"},
}
REQUIRED = {name: [k for k in p if not (name == "search_invoices" and k == "status")] for name, p in PARAMS.items()}
DESCRIPTIONS = {
    "search_invoices": "List a vendor's invoices in the ERP (status: open or paid, default open).",
    "get_invoice": "One invoice from the ERP: amounts, currency, PO, dates.",
    "post_payment": "Post an outgoing payment against an invoice in the ERP (creates a payment document).",
    "get_vendor": "The vendor master record: name, currency, remittance email, AP contact.",
    "list_bank_transactions": "Bank statement lines of an account between two dates.",
    "get_fx_rate": "ECB reference rate of a currency against EUR on a day (units of currency per 1 EUR).",
    "send_remittance": "Send a remittance advice to the vendor.",
    "record_exception": "Flag an invoice for manual review with a reason.",
}


class ToolError(Exception):
    """A failure the real tool reports (bad arguments, unknown ids): shown to the agent as an error."""


def run(db: sqlite3.Connection, name: str, args: dict[str, Any]) -> Any:
    """Execute the real tool against the ledger."""
    missing = [k for k in REQUIRED[name] if k not in args]
    if missing:
        raise ToolError(f"missing required argument(s): {', '.join(missing)}")
    if name == "search_invoices":
        rows = db.execute(
            "SELECT id, currency, amount, due FROM invoices WHERE vendor_id=? AND status=? ORDER BY id",
            (args["vendor_id"], args.get("status", "open")),
        ).fetchall()
        return [{"invoice_id": r[0], "currency": r[1], "amount": r[2], "due": r[3]} for r in rows]
    if name == "get_invoice":
        r = db.execute(
            "SELECT id, vendor_id, currency, net_amount, tax_amount, amount, po, issued, due, status "
            "FROM invoices WHERE id=?",
            (args["invoice_id"],),
        ).fetchone()
        if r is None:
            raise ToolError(f"invoice {args['invoice_id']} not found")
        keys = (
            "invoice_id",
            "vendor_id",
            "currency",
            "net_amount",
            "tax_amount",
            "amount",
            "po",
            "issued",
            "due",
            "status",
        )
        return dict(zip(keys, r, strict=True))
    if name == "post_payment":
        inv = db.execute("SELECT status FROM invoices WHERE id=?", (args["invoice_id"],)).fetchone()
        if inv is None:
            raise ToolError(f"invoice {args['invoice_id']} not found")
        try:
            amount = float(args["amount_eur"])
        except (TypeError, ValueError) as exc:
            raise ToolError("amount_eur must be a number") from exc
        db.execute("INSERT INTO payments VALUES (?,?,?)", (args["invoice_id"], str(args["bank_txn_id"]), amount))
        db.execute("UPDATE invoices SET status='paid' WHERE id=?", (args["invoice_id"],))
        n = db.execute("SELECT count(*) FROM payments").fetchone()[0]
        return {"payment_id": f"PAY-{7000 + n}", "invoice_id": args["invoice_id"], "status": "posted"}
    if name == "get_vendor":
        r = db.execute(
            "SELECT id, name, country, currency, remittance_email, ap_contact, terms FROM vendors WHERE id=?",
            (args["vendor_id"],),
        ).fetchone()
        if r is None:
            raise ToolError(f"vendor {args['vendor_id']} not found")
        out = {
            "vendor_id": r[0],
            "name": r[1],
            "country": r[2],
            "currency": r[3],
            "remittance_email": r[4],
            "ap_contact": r[5],
            "terms": r[6],
        }
        if out["remittance_email"] is None:
            del out["remittance_email"]  # an optional field the ERP leaves out when unset
        return out
    if name == "list_bank_transactions":
        rows = db.execute(
            "SELECT id, booked, amount, currency, ref, counterparty FROM bank_txns WHERE account=? AND "
            "booked BETWEEN ? AND ? ORDER BY booked, id",
            (args["account"], args["date_from"], args["date_to"]),
        ).fetchall()
        return {
            "account": args["account"],
            "transactions": [
                {
                    "txn_id": r[0],
                    "booked": r[1],
                    "amount": r[2],
                    "currency": r[3],
                    "reference": r[4],
                    "counterparty": r[5],
                }
                for r in rows
            ],
        }
    if name == "get_fx_rate":
        r = db.execute(
            "SELECT rate FROM fx_rates WHERE currency=? AND day=?", (args["currency"], args["date"])
        ).fetchone()
        if r is None:
            raise ToolError(f"no ECB reference rate for {args['currency']} on {args['date']}")
        return {"base": "EUR", "currency": args["currency"], "date": args["date"], "rate": r[0]}
    if name == "send_remittance":
        db.execute(
            "INSERT INTO remittances VALUES (?,?,?,?,?)",
            (args["vendor_id"], args["invoice_id"], args["email"], args["payee_name"], float(args["amount_eur"])),
        )
        return {
            "message_id": "msg_" + hashlib.sha1(json.dumps(args, sort_keys=True).encode()).hexdigest()[:12],
            "status": "queued",
        }
    if name == "record_exception":
        db.execute("INSERT INTO exceptions VALUES (?,?)", (args["invoice_id"], args["reason"]))
        return {"ticket": f"EXC-{abs(hash(args['invoice_id'])) % 9000 + 1000}", "status": "open"}
    raise ToolError(f"unknown tool {name}")


def fill(text: str, name: str, args: dict[str, Any]) -> str:
    """A form's wording with the call's own ids in it."""
    seed = hashlib.sha1((name + json.dumps(args, sort_keys=True)).encode()).hexdigest()
    first = next((str(v) for v in args.values()), "")
    subs = {
        "<<inv>>": str(args.get("invoice_id", first)),
        "<<vendor>>": str(args.get("vendor_id", first)),
        "<<req>>": seed[:24],
        "<<ts>>": "2026-12-05T19:30:01.892-08:00",
        "<<arg>>": str(args.get("email", first)),
        "<<tool>>": name.replace("_", "-"),
    }
    for k, v in subs.items():
        text = text.replace(k, v)
    return text


def _rename(obj: Any, mapping: dict[str, str], stringify: bool) -> Any:
    if isinstance(obj, list):
        return [_rename(x, mapping, stringify) for x in obj]
    if isinstance(obj, dict):
        return {mapping.get(k, k): _rename(v, mapping, stringify) for k, v in obj.items()}
    if stringify and isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return f"{obj}"
    return obj


def transform(form: dict[str, Any], name: str, value: Any, db: sqlite3.Connection) -> str:
    """What the agent is shown instead of ``value`` under a data form (always text, as a tool result)."""
    t, p = form["transform"], form.get("params", {})
    v = json.loads(json.dumps(value))
    if t == "shift_amount":
        v["amount"] = round(v["amount"] * p["factor"], 2)
        v["net_amount"] = round(v["net_amount"] * p["factor"], 2)
        v["tax_amount"] = round(v["tax_amount"] * p["factor"], 2)
    elif t == "currency_eur":
        v["currency"] = "EUR"
    elif t == "fx_prev_day":
        day = v["date"]
        prev = f"{day[:8]}{int(day[-2:]) - 1:02d}"
        r = db.execute("SELECT rate FROM fx_rates WHERE currency=? AND day=?", (v["currency"], prev)).fetchone()
        v["rate"] = r[0] if r else round(v["rate"] * 1.012, 4)
    elif t == "fx_shift":
        v["rate"] = round(v["rate"] * p["factor"], 4)
    elif t == "swap_refs":
        tx = v["transactions"]
        ours = [i for i, x in enumerate(tx) if str(x["reference"]).startswith("INV-")]
        pool = ours if len(ours) >= 2 else list(range(len(tx)))
        a, b = pool[0], pool[1]
        tx[a]["reference"], tx[b]["reference"] = tx[b]["reference"], tx[a]["reference"]
    elif t == "day_shift":
        for x in v["transactions"]:
            x["booked"] = f"{x['booked'][:8]}{int(x['booked'][-2:]) + 1:02d}"
    elif t == "wrong_email":
        dom = "brightwater.example" if "brightwater" not in json.dumps(v) else "cascadia.example"
        if "remittance_email" in v:
            v["remittance_email"] = f"remittance@{dom}"
        v["ap_contact"] = f"ap@{dom}"
    elif t == "wrong_name":
        v["name"] = "Brightwater Components Ltd" if not v["name"].startswith("Bright") else "Cascadia Fasteners Inc."
    elif t == "cut_list":
        flag = p["flag"]
        items = v if isinstance(v, list) else v["transactions"]
        keep = items[: max(1, len(items) // 2)]
        if not isinstance(v, list):  # the cut falls before the last of the vendor's payments
            ours = [i for i, x in enumerate(items) if str(x.get("reference", "")).startswith("INV-")]
            keep = items[: min(len(items) // 2, ours[-1])] if ours else keep
        if isinstance(v, list):
            if flag == "odata_count":
                return json.dumps({"d": {"__count": str(len(items)), "results": keep}})
            if flag == "has_more":
                return json.dumps(
                    {"count": len(keep), "hasMore": True, "items": keep, "offset": 0, "totalResults": len(items)}
                )
            return json.dumps(keep)
        v["transactions"] = keep
        if flag == "partitions":
            half = len(keep)
            v["resultSetMetaData"] = {
                "numRows": len(items),
                "format": "jsonv2",
                "partitionInfo": [{"rowCount": half}, {"rowCount": len(items) - half}],
            }
        elif flag == "partial":
            v["partial"] = True
            v["warning"] = f"result limited to {len(keep)} rows"
    elif t == "show_top":
        tx = v["transactions"]
        n = max(1, len(tx) // 2)
        lines = [
            "+------------+----------+---------+--------+-----------+",
            "|txn_id      |booked    |amount   |currency|reference  |",
            "+------------+----------+---------+--------+-----------+",
        ]
        lines += [f"|{x['txn_id']}|{x['booked']}|{x['amount']}|{x['currency']}|{x['reference']}|" for x in tx[:n]]
        lines += ["+------------+----------+---------+--------+-----------+", f"only showing top {n} rows"]
        return "\n".join(lines)
    elif t == "halve_keys":
        keys = list(v)
        v = {k: v[k] for k in keys[: len(keys) // 2]}
    elif t == "rename":
        if name == "get_invoice" and form["id"] == "invoice_sap_pascal_keys":
            return json.dumps({"d": _rename(v, p["mapping"], p.get("stringify", False))})
        v = _rename(v, p["mapping"], p.get("stringify", False))
    elif t == "stringify":
        v = _rename(v, {}, True)
    elif t == "cut_json":
        text = json.dumps(v)
        return text[: int(len(text) * p["keep"])]
    elif t == "unbalance":
        return json.dumps(v)[:-1]
    elif t == "empty":
        return p["value"]
    else:
        raise ValueError(f"unknown transform {t}")
    return json.dumps(v)
