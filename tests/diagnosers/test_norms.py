"""A tool's answer against what the tool returns across the whole store (``diagnosers/norms.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentchaos_otel.records import EpisodeTrace
from benchmarks.corpora.spans import write_episodes
from benchmarks.corpora.synthetic import episode_of, llm_record, tool_record
from diagnosers.base import diagnose_episodes
from diagnosers.cli import app
from diagnosers.norms import MIN_RESULTS, ToolNorms
from diagnosers.observe import observe_step
from diagnosers.prompt import render_episode
from diagnosers.rules import RuleDiagnoser
from diagnosers.taxonomy import NONE_FOUND
from diagnosers.view import EpisodeView

ORDER = {"order_id": "ORD-1", "customer_id": "C-1", "status": "open", "currency": "EUR", "total": 12.5}
LOOKUP = ("get_order", {"order_id": "ORD-1"})


def _episode(i: int, answer: dict[str, Any], *, success: bool = True, then: dict[str, Any] | None = None
             ) -> EpisodeTrace:
    """An agent that looks an order up first (step 1), maybe again (step 3), then answers."""
    steps = [llm_record(0, content=None, tool_calls=[LOOKUP]), tool_record(1, "get_order", answer, args=LOOKUP[1])]
    if then is not None:
        steps += [llm_record(2, content=None, tool_calls=[LOOKUP]), tool_record(3, "get_order", then, args=LOOKUP[1])]
    steps.append(llm_record(len(steps), content="Order ORD-1 is open."))
    return episode_of(steps, success=success, task_id=f"t{i}", trace_id=f"{i:032x}")


def _store(n: int, odd: list[EpisodeTrace]) -> list[EpisodeTrace]:
    return [_episode(i, dict(ORDER, note=f"n{i}") if i % 3 == 0 else ORDER) for i in range(n)] + odd


def _norms(episodes: list[EpisodeTrace]) -> ToolNorms:
    return ToolNorms.from_episodes(episodes)


def _deviation(norms: ToolNorms, answer: Any) -> Any:
    return norms.deviation(observe_step(tool_record(1, "get_order", answer, args=LOOKUP[1]), 1))


def test_a_renamed_answer_breaks_the_norm_and_an_optional_member_left_out_does_not() -> None:
    norms = _norms(_store(40, []))
    renamed = {"orderId": "ORD-1", "customerId": "C-1", "status": "open", "currency": "EUR", "total": 12.5}
    d = _deviation(norms, renamed)
    assert d is not None and d.fault_type == "key_rename" and d.level == "result"
    assert d.missing == ("customer_id", "order_id") and d.unfamiliar == ("customerId", "orderId")
    # `note` is in a third of the answers only: not part of the tool's answer, so no deviation either way.
    assert _deviation(norms, ORDER) is None
    assert _deviation(norms, dict(ORDER, note="x")) is None
    # One usual key gone with nothing in its place is no cut; two of the five (a third or more) are.
    assert _deviation(norms, {k: v for k, v in ORDER.items() if k != "total"}) is None
    two = _deviation(norms, {k: v for k, v in ORDER.items() if k not in ("total", "currency")})
    assert two is not None and two.fault_type == "truncated" and two.missing == ("currency", "total")
    cut = _deviation(norms, {"order_id": "ORD-1", "status": "open"})
    assert cut is not None and cut.fault_type == "truncated" and cut.missing == ("currency", "customer_id", "total")


def test_numbers_as_strings_break_a_tool_that_writes_numbers_and_not_one_that_writes_strings() -> None:
    norms = _norms(_store(40, []))
    d = _deviation(norms, dict(ORDER, total="12.5"))
    assert d is not None and (d.fault_type, d.level) == ("key_rename", "values")
    assert "numbers delivered as strings" in d.describe()
    # A tool that always writes its amounts as strings (Amadeus's prices) has that as its norm.
    always = _norms([_episode(i, dict(ORDER, total="12.5")) for i in range(40)])
    assert _deviation(always, dict(ORDER, total="99.0")) is None


def test_an_empty_answer_from_a_tool_that_almost_never_answers_empty_is_named_and_from_a_search_is_not() -> None:
    failed = _episode(99, [], success=False)
    d = diagnose_episodes(RuleDiagnoser(norms=_norms(_store(40, [failed]))), [failed])[0]
    assert (d.fault_type, d.step) == ("empty", 1) and "across the store" in d.evidence
    assert diagnose_episodes(RuleDiagnoser(), [failed])[0].fault_type == NONE_FOUND
    # A lookup that finds nothing in a tenth of its answers has empty answers in its norm.
    often = [_episode(i, [] if i % 10 == 0 else ORDER) for i in range(40)]
    assert diagnose_episodes(RuleDiagnoser(norms=_norms(often + [failed])), [failed])[0].fault_type == NONE_FOUND


def test_errors_empty_answers_and_tools_without_enough_answers_are_not_judged() -> None:
    norms = _norms(_store(40, []))
    assert _deviation(norms, {"error": {"code": "NotFound", "message": "order ORD-1 not found"}}) is None
    assert _deviation(norms, {}) is None
    few = _norms(_store(MIN_RESULTS - 1, []))
    assert len(few) == 0
    assert _deviation(few, {"orderId": "ORD-1"}) is None


def test_the_records_of_a_listing_have_a_norm_of_their_own() -> None:
    rows = [{"sku": f"S{i}", "on_hand": i, "reserved": 0} for i in range(3)]
    eps = [episode_of([tool_record(0, "list_stock", {"items": rows, "next": None})], task_id=f"s{i}",
                      trace_id=f"{i:032x}") for i in range(30)]
    norms = _norms(eps)
    odd = [{"sku": "S1", "onHand": 1, "reserved": 0}]
    d = norms.deviation(observe_step(tool_record(0, "list_stock", {"items": odd, "next": None}), 0))
    assert d is not None and d.fault_type == "key_rename" and d.level == "records" and d.unfamiliar == ("onHand",)


def test_a_renamed_first_answer_is_named_with_the_store_norm_and_not_without_it() -> None:
    renamed = {"id": "ORD-1", "customer": "C-1", "state": "open", "currency": "EUR", "total": 12.5}
    failed = _episode(99, renamed, success=False)
    eps = _store(40, [failed])
    with_norms = diagnose_episodes(RuleDiagnoser(norms=_norms(eps)), [failed])[0]
    assert (with_norms.fault_type, with_norms.step, with_norms.target) == ("key_rename", 1, "tool_result")
    assert "across the store" in with_norms.evidence
    assert diagnose_episodes(RuleDiagnoser(), [failed])[0].fault_type == NONE_FOUND
    # A failure whose answers all keep the norm is not blamed on them.
    plain = _episode(98, ORDER, success=False, then=ORDER)
    assert diagnose_episodes(RuleDiagnoser(norms=_norms(eps + [plain])), [plain])[0].fault_type == NONE_FOUND


def test_the_store_query_counts_what_the_observations_count(tmp_path: Path) -> None:
    odd = [_episode(90, {"orderId": "ORD-1", "status": "open"}, success=False),
           _episode(91, {"error": "upstream timed out"}, success=False), _episode(92, {}, success=False)]
    eps = _store(30, odd)
    db = tmp_path / "t.duckdb"
    write_episodes(eps, db)
    stored, made = ToolNorms.from_store(db), _norms(eps)
    assert stored.top == made.top and stored.records == made.records
    assert stored.values == made.values
    assert stored.top["get_order"].results == 31  # the error and the empty answer name no keys
    assert stored.values["get_order"].results == 32 and stored.values["get_order"].counts["empty"] == 1


def test_diagnose_reads_the_store_norm(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    write_episodes(_store(30, [_episode(90, {"orderId": "ORD-1", "customerId": "C-1", "status": "open",
                                                 "currency": "EUR", "total": 12.5}, success=False)]), db)
    result = CliRunner().invoke(app, ["run", str(db), "--json", "--no-write"])
    assert result.exit_code == 0, result.output
    (d,) = json.loads(result.stdout)
    assert (d["fault_type"], d["step"]) == ("key_rename", 1) and "across the store" in d["evidence"]


def test_the_llm_diagnoser_sees_the_same_deviation() -> None:
    failed = _episode(99, {"orderId": "ORD-1", "customerId": "C-1", "status": "open", "currency": "EUR",
                           "total": 12.5}, success=False)
    eps = _store(40, [failed])
    shown = render_episode(EpisodeView(failed, _norms(eps)))
    assert "unlike_store(key_rename: missing customer_id,order_id; unfamiliar customerId,orderId)" in shown
    assert "unlike_store" not in render_episode(EpisodeView(failed))


def test_a_tool_with_its_own_naming_convention_is_no_rename_when_the_store_knows_it() -> None:
    """An agent's tools are different APIs: an address validator answering in snake_case beside
    carriers answering in camelCase is each tool's own convention, which the store shows."""
    address = ("validate_address", {"street": "1 Main St"})
    checked = {"dpv_match_code": "Y", "delivery_line_1": "1 MAIN ST", "zip_code": "10001"}
    rates = {"serviceType": "GROUND", "totalCharge": 12.5, "transitDays": 3}

    def run(i: int, success: bool = True) -> EpisodeTrace:
        return episode_of([
            llm_record(0, content=None, tool_calls=[("get_rates", {"to": "10001"})]),
            tool_record(1, "get_rates", rates, args={"to": "10001"}),
            llm_record(2, content=None, tool_calls=[address]),
            tool_record(3, "validate_address", checked, args=address[1]),
            llm_record(4, content="Booked.")], success=success, task_id=f"a{i}", trace_id=f"{i:032x}")

    failed = run(99, success=False)
    blind = diagnose_episodes(RuleDiagnoser(), [failed])[0]
    assert blind.fault_type == "key_rename"  # the episode alone takes one convention for a rewrite
    knowing = diagnose_episodes(RuleDiagnoser(norms=_norms([run(i) for i in range(30)] + [failed])), [failed])[0]
    assert knowing.fault_type == NONE_FOUND


def test_an_earlier_weak_sign_on_another_tool_is_not_where_a_rename_started() -> None:
    zip_lookup = ("validate_address", {"street": "1 Main St"})
    duties = ("calculate_duties", {"hs": "6109"})
    steps = [llm_record(0, content=None, tool_calls=[zip_lookup]),
             tool_record(1, "validate_address", {"zip": "10001", "plus4": "1234"}, args=zip_lookup[1]),
             llm_record(2, content=None, tool_calls=[duties]),
             tool_record(3, "calculate_duties", {"duty_rate": 0.12, "duty_amount": 3.6}, args=duties[1]),
             llm_record(4, content=None, tool_calls=[duties]),
             tool_record(5, "calculate_duties", {"dutyRate": 0.12, "dutyAmount": 3.6}, args=duties[1]),
             llm_record(6, content="Duties are 3.6.")]
    failed = episode_of(steps, success=False)
    d = diagnose_episodes(RuleDiagnoser(), [failed])[0]
    assert (d.fault_type, d.step) == ("key_rename", 5)
    # The zip codes alone are a weak sign on a first answer, and none once the store shows the
    # validator always answers that way.
    first = steps[:2] + [llm_record(2, content="Done.")]
    assert "numbers delivered as strings" in diagnose_episodes(RuleDiagnoser(), [episode_of(first)])[0].evidence
    usual = [episode_of(first, task_id=f"z{i}", trace_id=f"{i:032x}") for i in range(30)]
    seen = diagnose_episodes(RuleDiagnoser(norms=_norms(usual)), [episode_of(first, success=False)])[0]
    assert "numbers delivered as strings" not in seen.evidence


def _search(total: int, shown: int) -> dict[str, Any]:
    """A search answer that echoes its query beside its hits and their count (data of its own, so
    the count alone does not make it a listing)."""
    return {"city": "Lisbon", "checkin": "2026-12-24", "hotels": [{"id": f"H{i}"} for i in range(shown)],
            "total": total}


def test_a_count_above_the_items_breaks_a_tool_whose_counts_match_and_not_one_whose_total_is_an_amount() -> None:
    def answers(tool: str, make: Any) -> list[EpisodeTrace]:
        return [episode_of([tool_record(0, tool, make(i))], task_id=f"{tool}{i}", trace_id=f"{tool}{i:030d}")
                for i in range(30)]

    searches = _norms(answers("find_hotels", lambda i: _search(3 + i % 4, 3 + i % 4)))
    cut = observe_step(tool_record(0, "find_hotels", _search(6, 2)), 0)
    assert cut.result_count_above == "total" and not cut.result_failure  # beside data: no reading alone
    d = searches.deviation(cut)
    assert d is not None and (d.fault_type, d.level, d.missing) == ("truncated", "count", ("total",))
    assert "count member (total) above the items" in d.describe()
    shown = render_episode(EpisodeView(episode_of([tool_record(0, "find_hotels", _search(6, 2))]), searches))
    assert "unlike_store(truncated: count total above items)" in shown
    assert searches.deviation(observe_step(tool_record(0, "find_hotels", _search(4, 4)), 0)) is None
    # An order's total is an amount, above its item count in every answer: that is the tool's way.
    orders = _norms(answers("get_order", lambda i: {"order_id": f"O{i}", "items": [{"sku": "S1"}], "total": 20 + i}))
    order = observe_step(tool_record(0, "get_order", {"order_id": "O9", "items": [{"sku": "S1"}], "total": 35}), 0)
    assert order.result_count_above == "total" and orders.deviation(order) is None


def test_a_count_above_the_items_is_read_before_a_rename_and_counted_by_the_store_query(tmp_path: Path) -> None:
    eps = [episode_of([tool_record(0, "search_logs", {"hits": [{"m": "x"}] * 3, "total": 3, "query": "level:error"})],
                      task_id=f"l{i}", trace_id=f"{i:032x}") for i in range(30)]
    # ClickHouse's count of the rows a LIMIT left out stands where `total` was: a cut, not a rename.
    odd = tool_record(0, "search_logs", {"hits": [{"m": "x"}], "rows_before_limit_at_least": 3,
                                          "query": "level:error"})
    eps.append(episode_of([odd], task_id="odd", trace_id="f" * 32))
    db = tmp_path / "t.duckdb"
    write_episodes(eps, db)
    stored, made = ToolNorms.from_store(db), _norms(eps)
    assert stored.values == made.values and made.values["search_logs"].counts["count above items"] == 1
    d = stored.deviation(observe_step(odd, 0))
    assert d is not None and (d.fault_type, d.missing) == ("truncated", ("rowsbeforelimitatleast",))


def test_tool_spans_of_another_instrumentation_have_their_norm_from_the_captured_results(tmp_path: Path) -> None:
    """OpenInference's tool spans carry only the captured result (a LangGraph ToolMessage here):
    the store query derives their keys as the observations do, and a renamed first answer is named."""
    from agentchaos_otel import attributes as A
    from agentchaos_otel.records import StepRecord

    def oi_episode(i: int, answer: dict[str, Any], success: bool = True) -> EpisodeTrace:
        message = {"type": "tool", "data": {"content": json.dumps(answer), "tool_call_id": f"c{i}"}}
        attrs = {A.OI_SPAN_KIND: "TOOL", A.OI_TOOL_NAME: "get_order", A.OI_INPUT_VALUE: json.dumps(LOOKUP[1]),
                 A.OI_OUTPUT_VALUE: json.dumps(message)}
        steps = [llm_record(0, content=None, tool_calls=[LOOKUP]),
                 StepRecord(1, "s1", "tool", "get_order", 10, 20, "OK", None, attrs),
                 llm_record(2, content="Order ORD-1 is open.")]
        return episode_of(steps, success=success, task_id=f"t{i}", trace_id=f"{i:032x}")

    eps = [oi_episode(i, dict(ORDER, note=f"n{i}") if i % 3 == 0 else ORDER) for i in range(30)]
    eps.append(oi_episode(90, {"orderId": "ORD-1", "customerId": "C-1", "state": "open"}, success=False))
    db = tmp_path / "oi.duckdb"
    write_episodes(eps, db)
    stored, made = ToolNorms.from_store(db), _norms(eps)
    assert stored.top == made.top and stored.values == made.values and stored.top["get_order"].results == 31
    d = diagnose_episodes(RuleDiagnoser(norms=stored), [eps[-1]])[0]
    assert (d.fault_type, d.step) == ("key_rename", 1), d
