"""The idempotency guard: a repeated non-idempotent call after an error-looking result is not re-executed.

The BFCL case is checked on the official execution backend's state (``agentchaos_otel.agents.bfcl.double``)
and the official checker's verdict, independent of the guard's own bookkeeping.
"""

from __future__ import annotations

import openai
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.agents.bfcl import UNAVAILABLE_REASON, bfcl_available
from agentchaos_otel.episode_scope import Episode
from agentchaos_otel.guards import IdempotencyGuard, idempotent, not_idempotent


class Orders:
    """A tool with a side effect we can count, behind a layer that times out on chosen calls."""

    def __init__(self, timeouts: set[int]) -> None:
        self.placed: list[dict] = []
        self.timeouts = timeouts
        self.shown = 0

    def place_order(self, symbol: str, amount: int) -> dict:
        self.placed.append({"symbol": symbol, "amount": amount})
        return {"order_id": len(self.placed), "status": "filled"}

    def flaky(self, fn):  # stands where a network timeout or the tool-result injector would be
        def shown(**kwargs):
            result = fn(**kwargs)
            self.shown += 1
            return {"error": "timeout"} if self.shown in self.timeouts else result
        return shown


def guarded(orders: Orders, guard: IdempotencyGuard, tool=None):
    inner = guard.executions({"place_order": tool or orders.place_order})
    middle = {"place_order": orders.flaky(inner["place_order"])}
    return {"place_order": guard._agent_layer(middle["place_order"], "place_order")}


def test_repeat_after_timeout_returns_the_first_real_result_without_executing(memory_tracing) -> None:
    provider, exporter = memory_tracing
    orders = Orders(timeouts={1})
    tools = guarded(orders, IdempotencyGuard(tracer_provider=provider))
    assert tools["place_order"](symbol="NVDA", amount=3) == {"error": "timeout"}
    assert tools["place_order"](amount=3, symbol="NVDA") == {"order_id": 1, "status": "filled"}
    assert len(orders.placed) == 1
    (span,) = [s for s in exporter.get_finished_spans() if s.attributes.get(A.GUARD_SUPPRESSED)]
    assert span.name == A.tool_span_name("place_order")
    assert span.attributes[A.GEN_AI_OPERATION_NAME] == A.OP_EXECUTE_TOOL
    assert span.attributes[A.GUARD_REPLY] == "first_result" and span.attributes[A.GUARD_SUPPRESSED_OF] == 1
    # after the agent holds the answer, a deliberate identical call runs again
    tools["place_order"](symbol="NVDA", amount=3)
    assert len(orders.placed) == 2


def test_already_applied_reply_names_the_first_result() -> None:
    orders = Orders(timeouts={1})
    tools = guarded(orders, IdempotencyGuard(reply="already_applied"))
    tools["place_order"](symbol="NVDA", amount=3)
    reply = tools["place_order"](symbol="NVDA", amount=3)
    assert reply["already_applied"] is True and reply["result"] == {"order_id": 1, "status": "filled"}
    assert len(orders.placed) == 1


def test_what_is_not_suppressed() -> None:
    # declared idempotent, by name or by decorator: repeats run
    for guard, tool in ((IdempotencyGuard({"place_order"}), None), (IdempotencyGuard(), None)):
        orders = Orders(timeouts={1})
        fn = tool or orders.place_order
        if not guard._declared:
            fn = idempotent(lambda symbol, amount, _o=orders: _o.place_order(symbol, amount))
        tools = guarded(orders, guard, fn)
        tools["place_order"](symbol="A", amount=1)
        tools["place_order"](symbol="A", amount=1)
        assert len(orders.placed) == 2
    # different arguments run
    orders = Orders(timeouts={1})
    tools = guarded(orders, IdempotencyGuard())
    tools["place_order"](symbol="A", amount=1)
    tools["place_order"](symbol="A", amount=2)
    assert len(orders.placed) == 2
    # outside the window the repeat runs
    orders = Orders(timeouts={1})
    guard = IdempotencyGuard(window=1)
    tools = guarded(orders, guard)
    tools["place_order"](symbol="A", amount=1)
    tools["place_order"](symbol="B", amount=1)
    tools["place_order"](symbol="A", amount=1)
    assert len(orders.placed) == 3


def test_a_call_that_really_failed_may_be_repeated() -> None:
    calls = []

    @not_idempotent
    def transfer(amount: int) -> dict:
        calls.append(amount)
        return {"error": "insufficient funds"} if len(calls) == 1 else {"ok": True}

    tools = IdempotencyGuard().wrap({"transfer": transfer})
    assert tools["transfer"](amount=5) == {"error": "insufficient funds"}
    assert tools["transfer"](amount=5) == {"ok": True}
    assert calls == [5, 5]


def test_episode_wrap_tools_puts_the_injector_between_the_layers(memory_tracing) -> None:
    provider, exporter = memory_tracing
    placed = []

    def place_order(symbol: str) -> dict:
        placed.append(symbol)
        return {"order_id": len(placed)}

    with Episode("t", "once_timeout", 3, tracer_provider=provider) as ep:
        tools = ep.wrap_tools({"place_order": place_order}, guard=IdempotencyGuard(tracer_provider=provider))
        shown = [tools["place_order"](symbol="NVDA") for _ in range(5)]
    faulted = [i for i, r in enumerate(shown) if r == {"error": "timeout"}]
    assert len(faulted) == 1  # once_timeout: one of the first four calls
    i = faulted[0]
    assert shown[i + 1] == {"order_id": i + 1}  # the first execution's real result
    assert len(placed) == 4  # five agent calls, one suppressed
    spans = [s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == "execute_tool"]
    assert sum(bool(s.attributes.get(A.GUARD_SUPPRESSED)) for s in spans) == 1


@pytest.mark.skipif(not bfcl_available(), reason=UNAVAILABLE_REASON)
def test_bfcl_place_order_is_not_applied_twice_after_an_injected_timeout(memory_tracing) -> None:
    """multi_turn_base_120, once_timeout, seed 0: the timeout hits ``place_order`` and the simulated
    model (which always retries a timeout) sends it again. Without the guard the official backend
    books the order twice and the checker fails the episode; with it, once, and the checker passes."""
    from agentchaos_otel.agents.bfcl.double import double_applications
    from agentchaos_otel.agents.bfcl.episode import run_bfcl_episode
    from agentchaos_otel.agents.bfcl.sim_policy import BfclSimPolicy, FaultReactions, MistakeRates
    from agentchaos_otel.agents.bfcl.tasks import get_task
    from agentchaos_otel.sim.server import SimulatedModelServer

    provider, exporter = memory_tracing
    task = get_task("multi_turn_base_120")
    policy = BfclSimPolicy([task], mistakes=MistakeRates(),
                           reactions=FaultReactions(retry={"timeout": 1.0}, abandon={}, max_retries=1))
    runs = []
    with SimulatedModelServer(policy, seed=0) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-sim")
        plain = run_bfcl_episode(task, condition="once_timeout", seed=0, model="sim-bfcl", client=client,
                                 tracer_provider=provider, on_run=runs.append)
        safe = run_bfcl_episode(task, condition="once_timeout", seed=0, model="sim-bfcl", client=client,
                                tracer_provider=provider, on_run=runs.append, label="once_timeout+guarded",
                                idempotency=lambda: IdempotencyGuard(tracer_provider=provider),
                                guards=("idempotency",))
    doubled = double_applications(task, runs[0].executed)
    assert [d.call.split("(")[0] for d in doubled] == ["place_order"]
    assert not plain.success and plain.grade_error_type == "multi_turn:instance_state_mismatch"
    assert double_applications(task, runs[1].executed) == []
    assert safe.success and runs[1].n_suppressed == 1 and safe.condition == "once_timeout+guarded"
    roots = {s.attributes[A.CONDITION]: s for s in exporter.get_finished_spans()
             if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_INVOKE_AGENT}
    assert roots["once_timeout"].attributes[A.EPISODE_DOUBLE_APPLIED] == 1
    assert roots["once_timeout+guarded"].attributes[A.EPISODE_DOUBLE_APPLIED] == 0
    assert list(roots["once_timeout+guarded"].attributes[A.EPISODE_GUARDS]) == ["idempotency"]
    suppressed = [s for s in exporter.get_finished_spans() if s.attributes.get(A.GUARD_SUPPRESSED)]
    assert [s.attributes[A.GEN_AI_TOOL_NAME] for s in suppressed] == ["place_order"]


def test_a_tool_object_becomes_a_mapping_of_its_methods() -> None:
    orders = Orders(timeouts=set())
    tools = IdempotencyGuard().wrap(orders)
    assert set(tools) >= {"place_order", "flaky"}
    assert tools["place_order"](symbol="A", amount=1) == {"order_id": 1, "status": "filled"}
    assert orders.placed == [{"symbol": "A", "amount": 1}]
    with pytest.raises(TypeError, match="instance"):
        IdempotencyGuard().wrap(Orders)
