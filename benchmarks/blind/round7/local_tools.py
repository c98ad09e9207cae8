"""The freight tools that run in the agent's process (sync and async), wrapped by ``Episode.wrap_tools``.

Address validation, duties, pick lists, dock appointments and notifications. Each really runs
against the world; a form scheduled for the call replaces what the agent is shown (a returned
error text or rewritten value) or raises the exception a client library would raise.
"""

from __future__ import annotations

import asyncio
import builtins
import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import Any

from benchmarks.blind.round7 import tools, world

LOCAL_TOOLS = ("validate_address", "calculate_duties", "create_pick_list", "schedule_dock", "notify_customer")


class LocalTools:
    """The five local tools over one world connection, counting calls per (task, tool)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.counts: Counter[tuple[str, str]] = Counter()

    def _call(self, name: str, args: dict[str, Any]) -> Any:
        try:
            result = tools.run_tool(self.db, name, args)
        except tools.ToolInputError as exc:
            raise ValueError(str(exc)) from None
        order = world.load_order(self.db, str(args["order_id"]))
        assert order is not None
        task = world.task_of(self.db, order.order_id) or ""
        self.counts[(task, name)] += 1
        nth = self.counts[(task, name)]
        form = tools.scheduled_form(self.db, task, name, nth)
        if form is None:
            return result
        tools.record_fired(self.db, task, "tool", name, nth, form.name)
        text, _ = tools.render(form, name, result, order)
        if form.kind == "raise":
            exc_type = getattr(builtins, form.extra["exc"])
            raise exc_type(text)
        return text

    def validate_address(
        self, order_id: str, street: str = "", city: str = "", postal_code: str = "", country: str = ""
    ) -> Any:
        """Standardise and verify a delivery address (sync, like a Smarty/Loqate client)."""
        return self._call(
            "validate_address",
            {"order_id": order_id, "street": street, "city": city, "postal_code": postal_code, "country": country},
        )

    async def calculate_duties(self, order_id: str, hs_code: str = "", value: float = 0.0, country: str = "") -> Any:
        """Import duties for a shipment's HS code and declared value (async)."""
        await asyncio.sleep(0)
        return self._call(
            "calculate_duties", {"order_id": order_id, "hs_code": hs_code, "value": value, "country": country}
        )

    def create_pick_list(self, order_id: str, sku: str = "", qty: int = 0, warehouse: str = "") -> Any:
        """Release a pick list to the warehouse floor (sync)."""
        return self._call("create_pick_list", {"order_id": order_id, "sku": sku, "qty": qty, "warehouse": warehouse})

    async def schedule_dock(self, order_id: str, warehouse: str = "", day: str = "") -> Any:
        """Book an outbound dock door for the carrier pickup (async)."""
        await asyncio.sleep(0)
        return self._call("schedule_dock", {"order_id": order_id, "warehouse": warehouse, "day": day})

    async def notify_customer(self, order_id: str, channel: str = "email", message: str = "") -> Any:
        """Send the customer a shipping notification (async)."""
        await asyncio.sleep(0)
        return self._call("notify_customer", {"order_id": order_id, "channel": channel, "message": message})

    def as_dict(self) -> dict[str, Callable[..., Any]]:
        return {name: getattr(self, name) for name in LOCAL_TOOLS}
