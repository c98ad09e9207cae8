"""Runs one episode: a pydantic-ai agent on the loopback model, traced by agentchaos_otel.

The agent is what a shop would write with pydantic-ai: an ``OpenAIChatModel`` on an ``AsyncOpenAI``
client (the SDK's own retries on), nine typed tools, a string output. It is driven through
``Agent.iter`` so that a model request that takes longer than the shop's per-call budget ends the
run (the agent gives up on a slow model), and, for streaming agents, each model request is consumed
as a stream.
"""

from __future__ import annotations

import time
from typing import Any

from openai import AsyncOpenAI
from pydantic_ai import Agent, Tool
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import agentchaos_otel
from benchmarks.blind.round3.grade import grade
from benchmarks.blind.round3.runtime import MODEL, Runtime

READ_TIMEOUT_S = 12.0
CALL_BUDGET_S = 15.0
INSTRUCTIONS = ("You are the fulfilment operator of an online shop. Use the tools to act on orders, stock, payments, "
                "shipments and customer email. Call one tool at a time, never charge an order twice, and end with a "
                "short summary for the requester.")


class CallBudgetExceeded(Exception):
    """A model request took longer than the agent's per-call budget."""


TOOL_NAMES = ("get_order", "get_customer", "check_stock", "reserve_stock", "charge_payment", "refund_payment",
              "create_shipment", "send_email", "list_orders")


def shop_tools(call: Any) -> list[Tool[None]]:
    async def get_order(order_id: str) -> str:
        """Load an order: its customer, currency and lines (sku, qty, unit price in cents)."""
        return call("get_order", order_id=order_id)

    async def get_customer(customer_id: str) -> str:
        """Load a customer's name, email and tier."""
        return call("get_customer", customer_id=customer_id)

    async def check_stock(sku: str) -> str:
        """Units available for a SKU and the warehouse holding them."""
        return call("check_stock", sku=sku)

    async def reserve_stock(sku: str, qty: int, order_id: str) -> str:
        """Reserve units of a SKU for an order."""
        return call("reserve_stock", sku=sku, qty=qty, order_id=order_id)

    async def charge_payment(order_id: str, amount_cents: int, currency: str) -> str:
        """Charge the customer of an order. Not idempotent: every call is a new charge."""
        return call("charge_payment", order_id=order_id, amount_cents=amount_cents, currency=currency)

    async def refund_payment(order_id: str, amount_cents: int) -> str:
        """Refund an amount to the customer of an order. Not idempotent."""
        return call("refund_payment", order_id=order_id, amount_cents=amount_cents)

    async def create_shipment(order_id: str, warehouse: str) -> str:
        """Create the shipment of an order from a warehouse; returns the tracking number."""
        return call("create_shipment", order_id=order_id, warehouse=warehouse)

    async def send_email(to: str, subject: str, body: str) -> str:
        """Send an email."""
        return call("send_email", to=to, subject=subject, body=body)

    async def list_orders(status: str = "pending", limit: int = 50) -> str:
        """List orders with a status (default: pending)."""
        return call("list_orders", status=status, limit=limit)

    return [Tool(f) for f in (get_order, get_customer, check_stock, reserve_stock, charge_payment, refund_payment,
                              create_shipment, send_email, list_orders)]


async def drive(agent: Agent[None, str], prompt: str, *, streaming: bool) -> str:
    async with agent.iter(prompt) as run:
        node = run.next_node
        while not Agent.is_end_node(node):
            started = time.monotonic()
            is_model = Agent.is_model_request_node(node)
            if is_model and streaming:
                async with node.stream(run.ctx) as events:
                    async for _ in events:
                        pass
            node = await run.next(node)
            if is_model and time.monotonic() - started > CALL_BUDGET_S:
                raise CallBudgetExceeded(f"model call exceeded the {CALL_BUDGET_S}s budget; giving up")
        return str(run.result.output if run.result else "")


def _client(rt: Runtime, port: int, sdk_retries: int) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-loopback-not-a-secret",
                       max_retries=sdk_retries, timeout=READ_TIMEOUT_S, default_headers={"x-shop-session": rt.task_id})


def _agent(client: AsyncOpenAI, call: Any) -> Agent[None, str]:
    return Agent(OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client)), tools=shop_tools(call),
                 instructions=INSTRUCTIONS, output_type=str)


async def run_agent(rt: Runtime, port: int, *, streaming: bool, sdk_retries: int, prompt: str) -> str:
    """The agent alone, outside any episode (the build's warm-up)."""
    client = _client(rt, port, sdk_retries)
    try:
        return await drive(_agent(client, rt.tool), prompt, streaming=streaming)
    finally:
        await client.close()


async def run_episode(rt: Runtime, port: int, *, streaming: bool, sdk_retries: int, prompt: str,
                      attributes: dict[str, Any]) -> None:
    """Play the episode and record its outcome on ``rt`` and on the episode span."""
    client = _client(rt, port, sdk_retries)
    try:
        async with agentchaos_otel.episode(task_id=rt.task_id, agent_name="fulfilment-agent",
                                           attributes=attributes) as ep:
            wrapped = ep.wrap_tools({name: (lambda n: (lambda **kw: rt.tool(n, **kw)))(name) for name in TOOL_NAMES})
            agent = _agent(client, lambda n, **kw: wrapped[n](**kw))
            error: str | None = None
            try:
                rt.world.reply = await drive(agent, prompt, streaming=streaming)
            except Exception as exc:  # the run failed: the framework, the SDK or the budget said so
                error = f"{type(exc).__name__}: {str(exc)[:200]}"
            ok, why = grade(rt.play.task, rt.world, rt.expected)
            ep.set_outcome(success=ok, error=None if ok else (error or f"task check failed: {why}"))
            rt.outcome = (ok, why, error)
    finally:
        await client.close()
