"""The SIMULATED model: a scripted accounts-payable clerk that decides its next move from the conversation.

The script is a generator replayed from the start on every request: it yields a tool call, receives
that call's result text (as the conversation holds it), and so on until it yields a final answer.
It reads results as a model would: it takes the fields it needs, falls back to look-alike fields,
trusts values it cannot check (a wrong or stale value is used, so the task fails late), and when it
cannot read a result it does what this episode's temperament says (retry once, skip the invoice,
or give up). Its own slips (giving up, a wrong pick, a malformed call) come from the episode's
``slip`` and are faults of no API or tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

Action = tuple[str, Any]  # ("call", (name, args)) | ("raw", (name, text)) | ("final", text)


@dataclass
class Temperament:
    on_error: str = "giveup"  # giveup | skip | retry  (what it does with a result it cannot read)
    slip: str | None = None  # its own mistake, for unfaulted failures
    slip_at: int = 0  # which invoice the slip happens on
    extra: dict[str, Any] = field(default_factory=dict)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def _num(x: Any) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def parse_task(prompt: str) -> dict[str, str]:
    m = re.search(r"vendor (\S+) against bank account (\S+) for (\S+)\.\.(\S+)\.", prompt)
    if m is None:
        raise ValueError("not a reconciliation task")
    return {"vendor_id": m.group(1), "account": m.group(2), "date_from": m.group(3), "date_to": m.group(4)}


def clerk(prompt: str, t: Temperament) -> Generator[Action, str, None]:
    """One reconciliation, as the scripted model plays it."""
    task = parse_task(prompt)
    reasons: dict[str, str] = {}

    def read(result: str, need: tuple[str, ...]) -> Any:
        data = _json(result)
        if isinstance(data, dict) and all(k in data for k in need):
            return data
        if isinstance(data, list) and not need:
            return data
        return None

    # 1. the vendor's open invoices
    args = {"vendor_id": task["vendor_id"], "status": "open"}
    res = yield ("call", ("search_invoices", args))
    invoices = _json(res)
    if not isinstance(invoices, list) and t.on_error == "retry":
        res = yield ("call", ("search_invoices", args))
        invoices = _json(res)
    if isinstance(invoices, dict):  # a paged envelope: take the rows it carries
        invoices = invoices.get("items") or (invoices.get("d") or {}).get("results")
    if not isinstance(invoices, list) or any(not isinstance(i, dict) or "invoice_id" not in i for i in invoices):
        yield (
            "final",
            "I could not read the vendor's open invoices from the ERP, so I stopped before posting "
            "anything.\nStatus: INCOMPLETE",
        )
        return
    if not invoices:
        yield ("final", f"Vendor {task['vendor_id']} has no open invoices; nothing to reconcile.\nStatus: COMPLETE")
        return
    if t.slip == "giveup_early":
        yield (
            "final",
            "This reconciliation needs a treasury sign-off I cannot obtain, so I am handing it back.\n"
            "Status: INCOMPLETE",
        )
        return

    # 2. the vendor master
    args = {"vendor_id": task["vendor_id"]}
    res = yield ("call", ("get_vendor", args))
    vendor = read(res, ("name",))
    if vendor is None and t.on_error == "retry":
        res = yield ("call", ("get_vendor", args))
        vendor = read(res, ("name",))
    if vendor is None or not (vendor.get("remittance_email") or vendor.get("ap_contact")):
        yield (
            "final",
            "I could not read the vendor master record, so I cannot address remittances.\nStatus: INCOMPLETE",
        )
        return
    email = vendor.get("remittance_email") or vendor.get("ap_contact")
    if t.slip == "contact_instead":
        email = vendor.get("ap_contact") or email

    # 3. the bank statement
    args = {"account": task["account"], "date_from": task["date_from"], "date_to": task["date_to"]}
    res = yield ("call", ("list_bank_transactions", args))
    stmt = read(res, ("transactions",))
    if stmt is None and t.on_error == "retry":
        res = yield ("call", ("list_bank_transactions", args))
        stmt = read(res, ("transactions",))
    if stmt is None:
        yield ("final", "I could not read the bank statement for the period.\nStatus: INCOMPLETE")
        return
    lines = [x for x in stmt["transactions"] if isinstance(x, dict)]

    # 4. each invoice
    done: list[str] = []
    for k, row in enumerate(invoices):
        inv_id = row["invoice_id"]
        if t.slip == "stop_short" and k == len(invoices) - 1 and k > 0:
            break
        if t.slip == "unknown_tool" and k == t.slip_at:
            res = yield ("call", ("reconcile_invoice", {"invoice_id": inv_id}))
            yield ("final", f"The reconciliation tool rejected {inv_id}; I stopped here.\nStatus: INCOMPLETE")
            return
        args = {"invoice_id": inv_id}
        res = yield ("call", ("get_invoice", args))
        inv = read(res, ("currency",))
        if inv is None and t.on_error == "retry":
            res = yield ("call", ("get_invoice", args))
            inv = read(res, ("currency",))
        amount = None if inv is None else _num(inv.get("amount", inv.get("net_amount")))
        if t.slip == "net_amount" and k == t.slip_at and inv is not None:
            amount = _num(inv.get("net_amount"))
        if inv is None or amount is None:
            if t.on_error == "skip":
                reasons[inv_id] = "invoice record unreadable"
                yield ("call", ("record_exception", {"invoice_id": inv_id, "reason": "ERP invoice record unreadable"}))
                continue
            yield ("final", f"I could not read invoice {inv_id}; stopping.\nStatus: INCOMPLETE")
            return
        match = [x for x in lines if x.get("reference") == inv_id]
        if t.slip == "match_by_amount" and k == t.slip_at:
            others = [x for x in lines if x.get("reference") != inv_id]
            match = others[:1] or match
        if not match:
            reasons[inv_id] = "no bank payment with this reference"
            yield ("call", ("record_exception", {"invoice_id": inv_id, "reason": "no matching bank payment"}))
            continue
        txn = match[0]
        rate = 1.0
        if inv["currency"] != "EUR":
            args = {"currency": inv["currency"], "date": txn.get("booked")}
            res = yield ("call", ("get_fx_rate", args))
            fx = read(res, ("rate",))
            if fx is None and t.on_error == "retry":
                res = yield ("call", ("get_fx_rate", args))
                fx = read(res, ("rate",))
            r = None if fx is None else _num(fx["rate"])
            if r is None or r <= 0:
                if t.on_error == "skip":
                    reasons[inv_id] = "no FX rate"
                    yield ("call", ("record_exception", {"invoice_id": inv_id, "reason": "FX rate unavailable"}))
                    continue
                yield ("final", f"No usable FX rate for {inv['currency']}; stopping.\nStatus: INCOMPLETE")
                return
            rate = r
        eur = (
            round(amount / rate, 2)
            if not (t.slip == "inverse_fx" and k == t.slip_at and rate != 1.0)
            else round(amount * rate, 2)
        )
        pay = {"invoice_id": inv_id, "bank_txn_id": txn.get("txn_id"), "amount_eur": eur}
        if t.slip == "missing_param" and k == t.slip_at:
            pay = {"invoice_id": inv_id, "amount_eur": eur}
        if t.slip == "bad_json" and k == t.slip_at:
            res = yield (
                "raw",
                (
                    "post_payment",
                    f"{{'invoice_id': '{inv_id}', 'bank_txn_id': '{txn.get('txn_id')}', 'amount_eur': {eur}}}",
                ),
            )
            return
        res = yield ("call", ("post_payment", pay))
        posted = read(res, ("status",))
        if posted is None and t.on_error == "retry":
            res = yield ("call", ("post_payment", pay))
            posted = read(res, ("status",))
        if posted is None:
            if t.on_error == "skip":
                reasons[inv_id] = "payment not posted"
                yield ("call", ("record_exception", {"invoice_id": inv_id, "reason": "payment posting failed"}))
                continue
            yield ("final", f"Posting the payment of {inv_id} failed; stopping.\nStatus: INCOMPLETE")
            return
        if t.slip == "double_post" and k == t.slip_at:
            yield ("call", ("post_payment", pay))
        if t.slip == "skip_remittance" and k == t.slip_at:
            done.append(inv_id)
            continue
        rem = {
            "vendor_id": task["vendor_id"],
            "invoice_id": inv_id,
            "email": email,
            "payee_name": vendor["name"],
            "amount_eur": eur,
        }
        res = yield ("call", ("send_remittance", rem))
        sent = read(res, ("status",))
        if sent is None and t.on_error == "retry":
            res = yield ("call", ("send_remittance", rem))
            sent = read(res, ("status",))
        if sent is None:
            reasons[inv_id] = "remittance not sent"
            if t.on_error == "skip":
                yield ("call", ("record_exception", {"invoice_id": inv_id, "reason": "remittance advice failed"}))
                continue
            yield ("final", f"Payment of {inv_id} is posted but the remittance advice failed.\nStatus: INCOMPLETE")
            return
        done.append(inv_id)

    lines_out = [f"Reconciled {len(done)} of {len(invoices)} open invoice(s) of {task['vendor_id']}:"]
    lines_out += [f"- {i}: paid and advised" for i in done]
    lines_out += [f"- {i}: flagged ({r})" for i, r in reasons.items()]
    complete = len(done) == len(invoices) or t.slip in ("stop_short", "skip_remittance", "double_post")
    if t.slip == "no_status":
        lines_out.append("All invoices handled.")
    else:
        lines_out.append(
            "Status: COMPLETE" if complete and not reasons else f"Status: INCOMPLETE ({len(done)} of {len(invoices)})"
        )
    yield ("final", "\n".join(lines_out))
