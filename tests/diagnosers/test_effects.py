"""Root cause by effect: absorbed faults, double application, the model's own slips, successes."""

from __future__ import annotations

from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.records import StepRecord
from benchmarks.corpora.synthetic import episode_of, llm_record, tool_record
from diagnosers.base import diagnose_episodes
from diagnosers.rules import RuleDiagnoser
from diagnosers.taxonomy import NONE_FOUND
from diagnosers.view import EpisodeView

WEATHER = ("get_weather", {"city": "Oslo", "unit": "c"})
RESULT = {"city": "Oslo", "temperature": 4.5, "humidity": 80, "conditions": "rain"}
BOOK = ("book_flight", {"flight_id": "LH123"})
BOOK_TOOLS = [{"type": "function", "function": {"name": "book_flight", "parameters": {
    "type": "object", "properties": {"flight_id": {"type": "string"}}, "required": ["flight_id"]}}}]


def verdict(steps: list[StepRecord], *, success: bool | None = False) -> Any:
    return diagnose_episodes(RuleDiagnoser(), [episode_of(steps, success=success)])[0]  # type: ignore[arg-type]


def _same_request(step: int, **kw: Any) -> StepRecord:
    """An LLM step sent with the same request body as step 0 (an SDK retry)."""
    return llm_record(step, extra={A.REQUEST_DIGEST: "req-same", **kw.pop("extra", {})}, **kw)


def test_an_sdk_retry_that_succeeded_absorbs_the_fault() -> None:
    steps = [_same_request(0, status_code=429), _same_request(1, content=None, tool_calls=[WEATHER]),
             tool_record(2, "get_weather", RESULT, args=WEATHER[1]), llm_record(3, content="4.5 C in Oslo.")]
    d = verdict(steps)
    assert d.fault_type == NONE_FOUND and "absorbed" in d.evidence
    view = EpisodeView(episode_of(steps))
    eff = view.effect(view.obs[0])
    assert eff.absorbed and eff.retried_at == 1 and not eff.double_applied
    # The same 429 with no retry after it is the root cause.
    alone = verdict([llm_record(0, status_code=429)])
    assert (alone.fault_type, alone.step) == ("rate_limit", 0)


def test_a_tool_call_retried_successfully_is_absorbed_and_a_later_fault_is_the_root() -> None:
    steps = [llm_record(0, content=None, tool_calls=[WEATHER]),
             tool_record(1, "get_weather", {"error": "timeout"}, args=WEATHER[1]),
             llm_record(2, content=None, tool_calls=[WEATHER]),
             tool_record(3, "get_weather", RESULT, args=WEATHER[1]),
             llm_record(4, content="The forecast for Os", finish="length")]
    d = verdict(steps)
    assert (d.fault_type, d.step) == ("truncate", 4) and "absorbed" in d.evidence
    # Without the later fault, the failure is the model's own: nothing to blame.
    assert verdict(steps[:4] + [llm_record(4, content="It is sunny.")]).fault_type == NONE_FOUND


def test_a_retried_call_that_is_not_idempotent_took_effect_twice() -> None:
    booked = {"booking_id": "B1", "flight_id": "LH123", "status": "confirmed"}
    steps = [llm_record(0, content=None, tool_calls=[BOOK], request_tools=BOOK_TOOLS),
             tool_record(1, "book_flight", {"error": "timeout"}, args=BOOK[1]),
             llm_record(2, content=None, tool_calls=[BOOK], request_tools=BOOK_TOOLS),
             tool_record(3, "book_flight", booked, args=BOOK[1]),
             llm_record(4, content="Booked.")]
    d = verdict(steps)
    assert (d.fault_type, d.target, d.step) == ("timeout", "tool_result", 1)
    assert "took effect twice" in d.evidence
    # A refusal before acting (429) cannot have applied: the retry absorbed it.
    refused = [steps[0], tool_record(1, "book_flight", {"error": "rate_limit", "status": 429}, args=BOOK[1]),
               *steps[2:]]
    assert verdict(refused).fault_type == NONE_FOUND
    # A tool declaring itself idempotent (MCP idempotentHint) may be repeated.
    declared = [steps[0], tool_record(1, "book_flight", {"error": "timeout"}, args=BOOK[1]), steps[2],
                tool_record(3, "book_flight", booked, args=BOOK[1]), steps[4]]
    declared = [StepRecord(s.step, s.span_id, s.kind, s.name, s.start_ns, s.end_ns, s.status_code, s.error_type,
                           {**s.attributes, A.MCP_TOOL_IDEMPOTENT: True} if s.kind == "tool" else s.attributes)
                for s in declared]
    assert verdict(declared).fault_type == NONE_FOUND


def test_the_models_own_slips_are_not_faults() -> None:
    bad_json = [llm_record(0, content=None, tool_calls=[("get_weather", '{"city": Oslo}')]),
                llm_record(1, content="I could not do it.")]
    assert verdict(bad_json).fault_type == NONE_FOUND
    missing = [llm_record(0, content=None, tool_calls=[("get_weather", {"unit": "c"})]),
               tool_record(1, "get_weather", {"error": {"code": "INVALID_ARGUMENT", "message": "city is required"}},
                           args={"unit": "c"}),
               llm_record(2, content="Sorry.")]
    d = verdict(missing)
    assert d.fault_type == NONE_FOUND and "slip" in d.evidence
    # The same refusal of a call that was right is the tool's fault.
    valid = [llm_record(0, content=None, tool_calls=[WEATHER]),
             tool_record(1, "get_weather", {"error": {"code": "INVALID_ARGUMENT", "message": "bad request"}},
                         args=WEATHER[1]),
             llm_record(2, content="Sorry.")]
    d = verdict(valid)
    assert (d.fault_type, d.target, d.step) == ("invalid_request", "tool_result", 1)
    unknown = [llm_record(0, content=None, tool_calls=[("get_wether", {"city": "Oslo"})]),
               tool_record(1, "get_wether", "Error: tool 'get_wether' not found"), llm_record(2, content="Sorry.")]
    assert verdict(unknown).fault_type == NONE_FOUND


def test_arguments_emptied_to_nothing_are_an_error_of_the_tool_calls_not_a_slip() -> None:
    """docs/taxonomy.md: ``{}`` (or no arguments at all) for a tool that requires parameters is the
    model API's tool call coming back emptied (AgentChaos's tool_error), not the model's slip; the
    tool's refusal that follows is its effect, not a second root cause."""
    refused = tool_record(1, "get_weather", "TypeError: get_weather() missing 1 required positional argument")
    for emptied in ({}, ""):
        steps = [llm_record(0, content=None, tool_calls=[("get_weather", emptied)]), refused,
                 llm_record(2, content="Sorry.")]
        d = verdict(steps)
        assert (d.fault_type, d.target, d.step) == ("error", "tool_calls", 0), emptied
        assert "emptied" in d.evidence
    # A tool whose parameters are all optional may be called with {}: an ordinary call.
    optional = [{"type": "function", "function": {"name": "list_files", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}}]
    steps = [llm_record(0, content=None, tool_calls=[("list_files", {})], request_tools=optional),
             tool_record(1, "list_files", {"files": ["a.txt"]}, args={}), llm_record(2, content="a.txt")]
    assert verdict(steps).fault_type == NONE_FOUND
    # Keeping one declared parameter and leaving the required one out is the model's slip.
    partial = [llm_record(0, content=None, tool_calls=[("get_weather", {"unit": "c"})]), refused,
               llm_record(2, content="Sorry.")]
    d = verdict(partial)
    assert d.fault_type == NONE_FOUND and "slip" in d.evidence


def test_a_successful_episode_has_no_root_cause_whatever_it_met() -> None:
    steps = [llm_record(0, content=None, tool_calls=[WEATHER]),
             tool_record(1, "get_weather", {"error": "Service Unavailable", "status": 503}, args=WEATHER[1]),
             llm_record(2, content="4.5 C")]
    assert verdict(steps, success=True).fault_type == NONE_FOUND
    d = verdict(steps, success=None)  # outcome unknown: the evidence decides
    assert (d.fault_type, d.step) == ("error", 1)


def test_new_labels_on_both_sides() -> None:
    for result, label in (({"status": 403, "message": "Forbidden"}, "auth"),
                          ({"error": {"code": 5, "message": "no such city", "details": []}}, "not_found"),
                          ("psql: error: connection to server failed: Connection refused", "connection"),
                          ({"timed_out": True, "hits": [1, 2]}, "truncated"),
                          ("Traceback (most recent call last):\n  File \"x\", line 1\nKeyError: 'x'", "error")):
        steps = [llm_record(0, content=None, tool_calls=[WEATHER]),
                 tool_record(1, "get_weather", result, args=WEATHER[1]), llm_record(2, content="Done.")]
        d = verdict(steps)
        assert (d.fault_type, d.target, d.step) == (label, "tool_result", 1), result


def test_a_text_error_from_a_json_tool_is_an_error_not_broken_json() -> None:
    steps = [llm_record(0, content=None, tool_calls=[WEATHER]), tool_record(1, "get_weather", RESULT),
             llm_record(2, content=None, tool_calls=[WEATHER]),
             tool_record(3, "get_weather", "upstream service is down for maintenance"),
             llm_record(4, content="Sorry.")]
    d = verdict(steps)
    assert (d.fault_type, d.step) == ("error", 3)
    cut = steps[:3] + [tool_record(3, "get_weather", '{"city": "Oslo", "tempera'), steps[4]]
    assert verdict(cut).fault_type == "malformed_json"


def test_a_fault_that_went_away_on_retry_is_not_the_root_the_one_that_persisted_is() -> None:
    """An SDK retry chain meeting first a 503, then a 408 on every later attempt: the 503 went away
    on retry; the 408 is what ended the episode."""
    steps = [_same_request(0, status_code=503), _same_request(1, status_code=408),
             _same_request(2, status_code=408)]
    d = verdict(steps)
    assert (d.fault_type, d.step) == ("timeout", 1)
    same = [_same_request(0, status_code=503), _same_request(1, status_code=503)]
    assert (verdict(same).fault_type, verdict(same).step) == ("http_error", 0)


def test_a_stream_that_broke_off_is_stream_cut_whatever_broke_it() -> None:
    broke = llm_record(0, content="Partial", status_code=200, error_type="RemoteProtocolError",
                       extra={A.GEN_AI_REQUEST_STREAM: True})
    broke = StepRecord(broke.step, broke.span_id, "llm", broke.name, broke.start_ns, broke.end_ns, "ERROR",
                       "RemoteProtocolError", {**broke.attributes, A.RESPONSE_STATUS_CODE: 200})
    d = verdict([broke])
    assert (d.fault_type, d.target) == ("stream_cut", "stream")
    errored = llm_record(0, content="Partial", extra={A.GEN_AI_REQUEST_STREAM: True, A.RESPONSE_STREAM_DONE: False,
                                                      A.RESPONSE_FAILURE: "rate_limit",
                                                      A.RESPONSE_FAILURE_EVIDENCE: "error_member http:429"})
    d = verdict([errored])  # the stream reported an error event: what it reports wins
    assert (d.fault_type, d.target) == ("rate_limit", "stream")


def test_a_slow_final_answer_is_latency_only_when_the_agent_said_a_deadline_passed() -> None:
    fast = [llm_record(i, content=None, tool_calls=[WEATHER], ms=40.0) for i in range(3)]
    slow = fast + [llm_record(3, content="Done.", ms=4000.0)]
    assert verdict(slow).fault_type == NONE_FOUND
    ep = episode_of(slow)
    ep = type(ep)(ep.trace_id, ep.task_id, ep.steps, success=False, attributes={
        A.EPISODE_ERROR: "turn deadline exceeded: the model call took longer than 1.5s"})
    d = diagnose_episodes(RuleDiagnoser(), [ep])[0]
    assert (d.fault_type, d.step) == ("latency", 3)


def test_a_tool_retry_traced_only_by_another_instrumentation_is_absorbed() -> None:
    """OpenInference's tool spans carry the call's arguments and result as captured text, none of
    our signals: the identical retry is still told by its arguments, and absorbs the failure."""
    def oi_tool(step: int, output: Any, args: dict[str, Any]) -> StepRecord:
        import json

        attrs = {A.OI_SPAN_KIND: "TOOL", A.OI_TOOL_NAME: "get_weather", A.STEP: step,
                 A.OI_INPUT_VALUE: json.dumps(args), A.OI_OUTPUT_VALUE: json.dumps(output)}
        return StepRecord(step, f"s{step}", "tool", "get_weather", step * 10, step * 10 + 5, "OK", None, attrs)

    steps = [llm_record(0, content=None, tool_calls=[WEATHER]),
             oi_tool(1, {"error_code": "REQUEST_LIMIT_EXCEEDED", "message": "Exceeded rate limit. Retry later."},
                     WEATHER[1]),
             llm_record(2, content=None, tool_calls=[WEATHER]),
             oi_tool(3, RESULT, {"unit": "c", "city": "Oslo"}),  # the same arguments in another order
             llm_record(4, content="It is sunny.")]
    d = verdict(steps)
    assert d.fault_type == NONE_FOUND and "absorbed" in d.evidence, d
    # Other arguments the second time: the agent changed its plan, and the rate limit is the root.
    changed = [*steps[:3], oi_tool(3, RESULT, {"city": "Bergen", "unit": "c"}), steps[4]]
    assert (verdict(changed).fault_type, verdict(changed).step) == ("rate_limit", 1)


def test_a_tool_described_as_read_only_may_be_retried_whatever_its_verb() -> None:
    """A function tool declares itself only through its description to the model: a `run_` tool
    that says it is read-only took no effect twice when its timed-out call was retried."""
    query = ("run_query", {"sql": "SELECT 1"})

    def run(step: int, result: Any, description: str) -> StepRecord:
        rec = tool_record(step, "run_query", result, args=query[1])
        return StepRecord(rec.step, rec.span_id, rec.kind, rec.name, rec.start_ns, rec.end_ns, rec.status_code,
                          rec.error_type, {**rec.attributes, A.GEN_AI_TOOL_DESCRIPTION: description})

    def steps(description: str) -> list[StepRecord]:
        return [llm_record(0, content=None, tool_calls=[query]), run(1, {"error": "timeout"}, description),
                llm_record(2, content=None, tool_calls=[query]), run(3, {"rows": [[1]]}, description),
                llm_record(4, content="One row.")]

    assert verdict(steps("Run a read-only SQL statement on the warehouse.")).fault_type == NONE_FOUND
    for description in ("Run a SQL statement on the warehouse.", "Run a job (not idempotent)."):
        d = verdict(steps(description))
        assert (d.fault_type, d.step) == ("timeout", 1) and "took effect twice" in d.evidence, d
