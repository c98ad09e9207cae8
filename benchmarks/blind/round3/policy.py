"""The scripted model: the agent's side of the conversation, decided from the conversation itself.

Each request replays the conversation into a generator that plays the task: it yields the tool
call it wants, receives what the tool answered (as the model would read it from the tool message),
and ends with the reply it posts. Nothing else is remembered between requests, so the same
conversation always gets the same answer. A ``Persona`` says how this agent reacts (how often it
repeats a failed call) and which slip of its own, if any, it makes (an unfaulted failure).
"""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from benchmarks.blind.round3.world import money

# How pydantic-ai tells the model that a tool call could not be run (validation failed, unknown tool).
RETRY_PROMPT_PREFIXES = ('{"error":[{"type":', '{"error":"Unknown tool name')


@dataclass(frozen=True)
class Persona:
    tool_retries: int = 1          # same-argument repeats after a failed tool answer
    flaw: str | None = None        # the agent's own slip (see FLAWS)


FLAWS = ("slip_once", "give_up_early", "wrong_total", "wrong_recipient", "bad_args_json", "unknown_tool",
         "missing_param",
         "prose_only", "skip_email", "wrong_reply", "skip_last_order")


CALL_SLIPS = ("bad_args_json", "unknown_tool", "missing_param", "slip_once")


@dataclass(frozen=True)
class Call:
    name: str
    args: dict[str, Any]
    raw: str | None = None         # arguments exactly as written, when the model writes them wrong


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Obs:
    name: str
    args: Any
    text: str
    retry_prompt: bool = False


@dataclass
class Task:
    kind: str                                   # fulfil | batch | refund | stock_report
    order_id: str | None = None
    skus: list[str] = field(default_factory=list)

    def prompt(self) -> str:
        if self.kind == "fulfil":
            return (f"Please fulfil order {self.order_id}: check and reserve the stock for every line, charge the "
                    "customer the order total, create the shipment, and email the customer the tracking number. "
                    "Reply with a short summary including the customer's name and the tracking number.")
        if self.kind == "batch":
            return ("Process every pending order: for each one, load it, reserve the stock for each line and charge "
                    "the order total. Reply with how many orders you processed and the total charged.")
        if self.kind == "refund":
            return (f"Order {self.order_id} was returned. Refund the full amount, email the customer a confirmation "
                    "with the refunded amount, and reply with a summary including the customer's name and the amount.")
        return ("Send the stock report to ops@shop.example for these SKUs: " + ", ".join(self.skus)
                + ". Reply with the same figures.")


NEEDS: dict[str, dict[str, type]] = {
    "get_order": {"lines": list, "currency": str, "customer_id": str},
    "get_customer": {"email": str, "name": str},
    "check_stock": {"available": int, "warehouse": str},
    "reserve_stock": {"reservation_id": str},
    "charge_payment": {"charge_id": str},
    "refund_payment": {"refund_id": str},
    "create_shipment": {"tracking_number": str},
    "send_email": {"message_id": str},
    "list_orders": {"orders": list},
}
LINE_NEEDS = {"sku": str, "qty": int, "unit_price_cents": int}


def read(name: str, text: str) -> tuple[dict[str, Any] | None, str]:
    """What the model makes of a tool answer: the data it needs, or why it cannot use it."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return None, "an answer I could not read"
    if not isinstance(data, dict) or not data:
        return None, "an empty answer"
    if "error" in data or "errors" in data:
        return None, "an error"
    for key, typ in NEEDS[name].items():
        if not isinstance(data.get(key), typ) or isinstance(data.get(key), bool):
            return None, f"an answer without a usable `{key}`"
    if name == "get_order":
        for line in data["lines"]:
            if not isinstance(line, dict) or any(not isinstance(line.get(k), t) for k, t in LINE_NEEDS.items()):
                return None, "order lines I could not read"
    if name == "list_orders" and any(not isinstance(o, dict) or "order_id" not in o for o in data["orders"]):
        return None, "an order list I could not read"
    return data, ""


class Failed(Exception):
    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what}: {why}")
        self.what, self.why = what, why


Gen = Generator[Call | Say, Obs, Any]


class Play:
    """One task played by one persona; ``script()`` is the generator replayed on every request."""

    def __init__(self, task: Task, persona: Persona) -> None:
        self.task = task
        self.persona = persona

    def ask(self, name: str, args: dict[str, Any], *, raw: str | None = None, raw_once: bool = False) -> Gen:
        errors = strays = 0
        while True:
            obs = yield Call(name, args, raw if not (raw_once and strays) else None)
            if obs.retry_prompt or obs.name != name:
                strays += 1       # my call did not come out as I meant it, or the framework asked again
                if strays > 6:
                    raise Failed(f"calling {name}", "my tool calls kept going wrong")
                continue
            data, why = read(name, obs.text)
            if data is not None:
                return data
            errors += 1
            if errors > self.persona.tool_retries:
                raise Failed(f"the {name.replace('_', ' ')} call", why)

    def script(self) -> Gen:
        flaw = self.persona.flaw
        if flaw == "prose_only":
            which = f" for {self.task.order_id}" if self.task.order_id else ""
            return Say(f"Sure, I'll take care of that right away{which}.")
        try:
            return (yield from getattr(self, "_" + self.task.kind)())
        except Failed as f:
            return Say(f"I could not finish the task: {f.what} returned {f.why}. Stopping here so nothing is "
                       "done twice; please check and retry.")

    def _early(self, first: str) -> Say | None:
        if self.persona.flaw == "give_up_early":
            return Say(f"The {first} service does not seem to be available right now, so I can't complete this "
                       "request. Please try again later.")
        return None

    def _flawed_call(self, name: str, args: dict[str, Any]) -> Gen:
        flaw = self.persona.flaw
        if flaw in ("bad_args_json", "slip_once"):
            raw = json.dumps(args)[:-1] + ",}"   # a trailing comma: the model's own invalid JSON
            return (yield from self.ask(name, args, raw=raw, raw_once=flaw == "slip_once"))
        if flaw == "unknown_tool":
            return (yield from self.ask(name.replace("_", "-") + "_v2", args))
        if flaw == "missing_param":
            partial = dict(list(args.items())[:-1])
            return (yield from self.ask(name, partial))
        return (yield from self.ask(name, args))

    # ---- tasks ---------------------------------------------------------------------------------
    def _fulfil(self) -> Gen:
        oid = self.task.order_id
        order = yield from self.ask("get_order", {"order_id": oid})
        if (early := self._early("order")) is not None:
            return early
        cust = yield from self.ask("get_customer", {"customer_id": order["customer_id"]})
        warehouse = None
        for i, line in enumerate(order["lines"]):
            stock = yield from self.ask("check_stock", {"sku": line["sku"]})
            if stock["available"] < line["qty"]:
                return Say(f"I can't fulfil {oid}: only {stock['available']} units of {line['sku']} are available "
                           f"and the order needs {line['qty']}. Nothing was charged.")
            args = {"sku": line["sku"], "qty": line["qty"], "order_id": oid}
            if i == 0 and self.persona.flaw in CALL_SLIPS:
                yield from self._flawed_call("reserve_stock", args)
            else:
                yield from self.ask("reserve_stock", args)
            warehouse = warehouse or stock["warehouse"]
        total = sum(ln["qty"] * ln["unit_price_cents"] for ln in order["lines"])
        if self.persona.flaw == "wrong_total":
            total = sum(ln["unit_price_cents"] for ln in order["lines"])
            if all(ln["qty"] == 1 for ln in order["lines"]):
                total -= order["lines"][-1]["unit_price_cents"] // 10
        cur = order["currency"]
        yield from self.ask("charge_payment", {"order_id": oid, "amount_cents": total, "currency": cur})
        ship = yield from self.ask("create_shipment", {"order_id": oid, "warehouse": warehouse})
        tracking = ship["tracking_number"]
        name = cust["name"]
        to = "support@shop.example" if self.persona.flaw == "wrong_recipient" else cust["email"]
        if self.persona.flaw != "skip_email":
            yield from self.ask("send_email", {
                "to": to, "subject": f"Your order {oid} has shipped",
                "body": f"Hi {name},\n\nyour order {oid} is on its way with {ship.get('carrier', 'the carrier')}. "
                        "Tracking "
                        f"number: {tracking}. We charged {money(total, cur)}.\n\nThank you for shopping with us!"})
        if self.persona.flaw == "wrong_reply":
            swapped = tracking[:-2] + tracking[-1] + tracking[-2]
            tracking = swapped if swapped != tracking else tracking[:-1] + "0"
        return Say(f"Order {oid} for {name} is fulfilled: charged {money(total, cur)}, shipped from {warehouse} "
                   f"with tracking number {tracking}, and the customer has been emailed.")

    def _batch(self) -> Gen:
        listing = yield from self.ask("list_orders", {"status": "pending"})
        if (early := self._early("order listing")) is not None:
            return early
        orders = [o["order_id"] for o in listing["orders"]]
        if self.persona.flaw == "skip_last_order" and len(orders) > 1:
            orders = orders[:-1]
        done, skipped, charged = [], [], 0
        for oid in orders:
            try:
                order = yield from self.ask("get_order", {"order_id": oid})
                for i, line in enumerate(order["lines"]):
                    args = {"sku": line["sku"], "qty": line["qty"], "order_id": oid}
                    if oid == orders[-1] and i == 0 and self.persona.flaw in CALL_SLIPS:
                        yield from self._flawed_call("reserve_stock", args)
                    else:
                        yield from self.ask("reserve_stock", args)
                total = sum(ln["qty"] * ln["unit_price_cents"] for ln in order["lines"])
                if self.persona.flaw == "wrong_total" and oid == orders[len(orders) // 2]:
                    total = sum(ln["unit_price_cents"] for ln in order["lines"]) + 100
                yield from self.ask("charge_payment",
                                    {"order_id": oid, "amount_cents": total, "currency": order["currency"]})
                done.append(oid)
                charged += total
            except Failed as f:
                skipped.append(f"{oid} ({f.what} returned {f.why})")
        text = f"Processed {len(done)} pending orders ({', '.join(done) or 'none'}); total charged {charged / 100:.2f}."
        if skipped:
            text += " Skipped: " + "; ".join(skipped) + "."
        return Say(text)

    def _refund(self) -> Gen:
        oid = self.task.order_id
        order = yield from self.ask("get_order", {"order_id": oid})
        if (early := self._early("order")) is not None:
            return early
        total = sum(ln["qty"] * ln["unit_price_cents"] for ln in order["lines"])
        if self.persona.flaw == "wrong_total":
            total = sum(ln["unit_price_cents"] for ln in order["lines"])
            if all(ln["qty"] == 1 for ln in order["lines"]):
                total -= 100
        args = {"order_id": oid, "amount_cents": total}
        if self.persona.flaw in CALL_SLIPS:
            yield from self._flawed_call("refund_payment", args)
        else:
            yield from self.ask("refund_payment", args)
        cust = yield from self.ask("get_customer", {"customer_id": order["customer_id"]})
        cur, name = order["currency"], cust["name"]
        to = "support@shop.example" if self.persona.flaw == "wrong_recipient" else cust["email"]
        if self.persona.flaw != "skip_email":
            yield from self.ask("send_email", {
                "to": to, "subject": f"Refund for order {oid}",
                "body": f"Hi {name},\n\nthank you for sending back order {oid}. Your return has been checked and "
                        f"processed, and we have refunded {money(total, cur)} to your original payment method. "
                        "It should "
                        "reach your account within 5-10 business days.\n\nKind regards,\nThe shop team"})
        amount = money(total + (100 if self.persona.flaw == "wrong_reply" else 0), cur)
        return Say(f"Refunded {amount} for order {oid} to {name}; a confirmation email was sent.")

    def _stock_report(self) -> Gen:
        figures = []
        for i, sku in enumerate(self.task.skus):
            if i == 0 and self.persona.flaw in ("bad_args_json", "unknown_tool", "slip_once"):
                stock = yield from self._flawed_call("check_stock", {"sku": sku})
            else:
                stock = yield from self.ask("check_stock", {"sku": sku})
            if i == 0 and (early := self._early("inventory")) is not None:
                return early
            figures.append((sku, stock["available"], stock["warehouse"]))
        if self.persona.flaw == "wrong_reply":
            figures[-1] = (figures[-1][0], figures[-1][1] + 1, figures[-1][2])
        lines = "\n".join(f"{sku}: {n} units ({wh})" for sku, n, wh in figures)
        to = "sales@shop.example" if self.persona.flaw == "wrong_recipient" else "ops@shop.example"
        if self.persona.flaw != "skip_email":
            yield from self.ask("send_email", {"to": to, "subject": "Stock report", "body": "Current stock:\n" + lines})
        return Say("Stock report sent:\n" + lines)


def observations(messages: list[dict[str, Any]]) -> list[Obs]:
    """The tool answers in a chat-completions conversation, each with the call that asked for it."""
    calls: dict[str, tuple[str, Any]] = {}
    out: list[Obs] = []
    for m in messages:
        if m.get("role") == "assistant":
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function", {})
                try:
                    args = json.loads(fn.get("arguments") or "null")
                except ValueError:
                    args = None
                calls[tc.get("id")] = (fn.get("name"), args)
        elif m.get("role") == "tool":
            name, args = calls.get(m.get("tool_call_id"), (None, None))
            content = m.get("content")
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            text = str(content or "")
            out.append(Obs(str(name), args, text, retry_prompt=text.startswith(RETRY_PROMPT_PREFIXES)))
    return out


def decide(play: Play, messages: list[dict[str, Any]]) -> Call | Say:
    """The next move of ``play`` given the conversation so far."""
    gen = play.script()
    try:
        action = next(gen)
        for obs in observations(messages):
            action = gen.send(obs)
    except StopIteration as stop:
        return stop.value
    return action
