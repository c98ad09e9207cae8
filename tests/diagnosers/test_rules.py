"""Rule-based diagnosis on hand-built episodes shaped like the transport and tool injector record them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel import signals
from agentchaos_otel.records import EpisodeTrace, StepRecord
from benchmarks.corpora.synthetic import episode_of, fault_attrs, llm_record, tool_record
from diagnosers.base import CONFIDENCE_MIN, diagnose_episodes
from diagnosers.rules import RULES, RuleDiagnoser
from diagnosers.taxonomy import NONE_FOUND

WEATHER = ("get_weather", {"city": "Oslo", "unit": "c"})
RESULT = {"city": "Oslo", "temperature": 4.5, "humidity": 80, "conditions": "rain"}


def diagnose(steps: list[StepRecord]) -> Any:
    """The rules' raw verdict (no abstention), which these tests pin rule by rule."""
    return diagnose_episodes(RuleDiagnoser(), [episode_of(steps)], min_confidence=0)[0]


def healthy_prefix() -> list[StepRecord]:
    return [llm_record(0, content=None, tool_calls=[WEATHER]), tool_record(1, "get_weather", RESULT,
                                                                         args=WEATHER[1])]


@pytest.mark.parametrize("kwargs,ftype,rule", [
    ({"content": "[API ERROR] HTTP 500: Internal Server Error."}, "error", "error_text"),
    ({"content": "upstream connect error or disconnect/reset before headers"}, "connection", "error_text"),
    ({"content": "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head></html>"}, "error",
     "error_text"),
    ({"content": "Request timed out. Please try again."}, "timeout", "error_text"),
    # an error object delivered as the message content is the API answering in the wrong shape
    ({"content": '{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}'}, "schema",
     "error_text"),
    ({"content": "429 Too Many Requests: retry after 2 seconds"}, "rate_limit", "error_text"),
    ({"content": "Error: 401 Unauthorized"}, "auth", "error_text"),
    ({"content": '{"error": "content_policy_violation", "message": "filtered"}'}, "schema", "error_text"),
    ({"content": "Blocked.", "finish": "content_filter"}, "content_filter", "finish_content_filter"),
    ({"content": ""}, "empty", "empty_reply"),
    ({"content": None, "finish": "tool_calls"}, "empty", "promised_tool_calls"),
    ({"content": "The forecast for Montr", "finish": "length"}, "truncate", "finish_length"),
    ({"content": "Caf\u00c3\u00a9 in Z\u00c3\u00bcrich is open"}, "corrupt", "corrupt_text"),
    ({"content": None, "tool_calls": [("get_weather", {"wrong_param": "unexpected_value"})]}, "schema",
     "tool_arguments"),
    ({"content": None, "tool_calls": [("get_weather", {"city": "O\u2614l\u2600", "unit": "c"})]}, "corrupt",
     "tool_arguments"),
    ({"content": None, "tool_calls": [("get_weather", {"city": "Os", "unit": "c"})],
      "extra": {A.RESPONSE_TOOL_ARGS_CUT_VALUES: 1}}, "truncate", "tool_arguments"),
    ({"content": None, "tool_calls": [("get_weather", '{"city": "Os')]}, "truncate", "tool_arguments"),
    ({"content": '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'}, "schema",
     "error_text"),
    ({"content": '{"detail": "Invalid request"}'}, "schema", "error_text"),
    ({"content": "You exceeded your current quota, please check your plan."}, "rate_limit", "error_text"),
    ({"content": "  \n"}, "empty", "empty_reply"),
    ({"content": "The w\u0435ather in \u041esl\u043e is f\u0456ne t\u043eday"}, "corrupt", "corrupt_text"),
    ({"status_code": 429}, "rate_limit", "transport_error"),
    ({"status_code": 503}, "http_error", "transport_error"),
    ({"status_code": 504}, "timeout", "transport_error"),
    ({"status_code": 401}, "auth", "transport_error"),
    ({"status_code": 404}, "not_found", "transport_error"),
    ({"status_code": 400}, "invalid_request", "transport_error"),
    ({"content": "Blocked.", "finish": "SAFETY"}, "content_filter", "finish_content_filter"),
    ({"content": "", "finish": "guardrail_intervened"}, "content_filter", "finish_content_filter"),
    ({"content": "The forecast", "finish": "MAX_TOKENS"}, "truncate", "finish_length"),
    ({"content": "Partial", "finish": "error", "extra": {A.RESPONSE_FAILURE: "rate_limit",
                                                        A.RESPONSE_FAILURE_EVIDENCE: "choice_error"}},
     "rate_limit", "no_answer_in_body"),
    ({"status_code": None, "error_type": "ConnectError"}, "connection", "transport_error"),
    ({"status_code": None, "error_type": "ReadTimeout"}, "timeout", "transport_error"),
])
def test_llm_rules_name_type_and_step(kwargs: dict[str, Any], ftype: str, rule: str) -> None:
    steps = healthy_prefix() + [llm_record(2, **kwargs)]
    d = diagnose(steps)
    assert (d.fault_type, d.step, d.rule) == (ftype, 2, rule)
    assert d.span_id == "span0002" and 0 < d.confidence <= 1 and "step 2" in d.evidence


@pytest.mark.parametrize("result,ftype", [
    ({"error": "timeout"}, "timeout"),
    ({"error": "Gateway timed out"}, "timeout"),
    ({"error": "rate_limit", "status": 429}, "rate_limit"),
    ({}, "empty"),
    ("", "empty"),
    ('{"city": "Oslo", "temperature": 4.', "malformed_json"),
    ('{"city": "Oslo", "temperature": 4.5}\n... output truncated (1 of 2 results shown)', "truncated"),
    ({"city": "Oslo", "temperature": 4.5}, "truncated"),
    ({"CITY": "Oslo", "temperature_v2": "4.5", "humidity": "80", "conditions": "rain"}, "key_rename"),
    ({"city": "Oslo", "temperature": "4.5", "humidity": "80", "conditions": "rain"}, "key_rename"),
])
def test_tool_rules_compare_with_other_results_of_the_same_tool(result: Any, ftype: str) -> None:
    steps = healthy_prefix() + [llm_record(2, content=None, tool_calls=[WEATHER]),
                                tool_record(3, "get_weather", result, args=WEATHER[1]),
                                llm_record(4, content="Done.")]
    d = diagnose(steps)
    assert (d.fault_type, d.target, d.step) == (ftype, "tool_result", 3)


def test_same_named_types_keep_targets_apart() -> None:
    llm_timeout = diagnose(healthy_prefix() + [llm_record(2, content="[TIMEOUT] The request timed out.")])
    tool_timeout = diagnose(healthy_prefix() + [llm_record(2, content=None, tool_calls=[WEATHER]),
                                                tool_record(3, "get_weather", {"error": "timeout"})])
    assert llm_timeout.fault_type == tool_timeout.fault_type == "timeout"
    assert llm_timeout.target == "content" and tool_timeout.target == "tool_result"


def test_earliest_anomalous_step_is_the_root_cause() -> None:
    steps = healthy_prefix() + [
        llm_record(2, content="The answer is cut sho", finish="length"),
        llm_record(3, content="[API ERROR] HTTP 500"),
        llm_record(4, content=""),
    ]
    d = diagnose(steps)
    assert (d.fault_type, d.step) == ("truncate", 2)
    assert "2 later anomalous step(s)" in d.evidence


def test_weak_signals_only_count_when_nothing_strong() -> None:
    lost = [llm_record(0, content=None, tool_calls=[WEATHER]), tool_record(1, "get_weather", RESULT),
            llm_record(2, content=None, tool_calls=[WEATHER]),
            tool_record(3, "get_weather", {k: v for k, v in RESULT.items() if k != "humidity"}),
            llm_record(4, content="Sorry.")]
    weak = diagnose(lost)
    assert weak.step == 3 and weak.fault_type == "truncated" and weak.confidence < CONFIDENCE_MIN
    strong = diagnose(lost[:-1] + [llm_record(4, content="The answer is", finish="length")])
    assert strong.step == 4 and strong.fault_type == "truncate" and strong.rule == "finish_length"
    # By default weak evidence alone names no root cause: the verdict abstains and says why.
    abstained = diagnose_episodes(RuleDiagnoser(), [episode_of(lost)])[0]
    assert abstained.fault_type == NONE_FOUND and abstained.step is None
    assert "below confidence" in abstained.evidence and "lost keys" in abstained.evidence


def test_replayed_response_id_is_stale() -> None:
    steps = [llm_record(0, content=None, tool_calls=[WEATHER], response_id="chatcmpl-a"),
             tool_record(1, "get_weather", RESULT),
             llm_record(2, content=None, tool_calls=[WEATHER], response_id="chatcmpl-a"),
             tool_record(3, "get_weather", RESULT)]
    d = diagnose(steps)
    assert (d.fault_type, d.step, d.rule) == ("stale", 2, "replayed_response")


def test_latency_is_judged_against_the_episode_and_by_its_effect() -> None:
    fast = [llm_record(i, content=None, tool_calls=[WEATHER], ms=40.0) for i in range(5)]
    ended = diagnose(fast + [llm_record(5, content=None, tool_calls=[WEATHER], ms=5040.0)])
    assert (ended.fault_type, ended.step) == ("latency", 5)  # the episode ended waiting on it
    # The same slow call in the middle of an episode that went on: a loaded machine does this.
    middle = [llm_record(i, content=None, tool_calls=[WEATHER], ms=5040.0 if i == 3 else 40.0) for i in range(7)]
    assert diagnose_episodes(RuleDiagnoser(), [episode_of(middle)])[0].fault_type == NONE_FOUND
    # No clock: the whole episode twenty times slower is not slow.
    loaded = [llm_record(i, content=None, tool_calls=[WEATHER], ms=800.0) for i in range(6)]
    assert diagnose(loaded).fault_type == NONE_FOUND
    # No other call to judge by.
    assert diagnose([llm_record(0, content=None, tool_calls=[WEATHER], ms=9000.0)]).fault_type == NONE_FOUND
    # A slow final answer ends every episode: the agent acted on it, so it was not abandoned.
    final = diagnose(fast + [llm_record(5, content="Done.", ms=5040.0)])
    assert final.fault_type == "latency" and final.confidence < CONFIDENCE_MIN  # weak: never a verdict alone


def test_stream_faults() -> None:
    cut = diagnose([llm_record(0, content="Partial", finish="stop",
                               extra={A.GEN_AI_REQUEST_STREAM: True, A.RESPONSE_STREAM_DONE: False})])
    assert cut.fault_type == "stream_cut" and cut.target == "stream"

    def streamed(i: int, gap: float, ms: float) -> StepRecord:
        return llm_record(i, content=None, tool_calls=[WEATHER], ms=ms, extra={
            A.GEN_AI_REQUEST_STREAM: True, A.RESPONSE_STREAM_DONE: True, A.RESPONSE_MAX_CHUNK_GAP_MS: gap})
    stall = diagnose([streamed(i, 2.0, 40.0) for i in range(4)] + [streamed(4, 5000.0, 5040.0)])
    assert stall.fault_type == "latency" and stall.target == "stream" and stall.step == 4
    alone = diagnose([streamed(0, 5000.0, 5040.0)])  # nothing to compare with
    assert alone.fault_type == NONE_FOUND
    # gaps of a millisecond beside gaps of none are not a stall: only the call's own time counts
    assert diagnose([streamed(i, 0.0, 40.0) for i in range(4)] + [streamed(4, 1.0, 41.0)]).fault_type == NONE_FOUND


def test_healthy_episode_finds_nothing() -> None:
    steps = healthy_prefix() + [llm_record(2, content=None, tool_calls=[WEATHER]),
                                tool_record(3, "get_weather", {**RESULT, "temperature": 5.5}),
                                llm_record(4, content="It is 5.5 degrees and raining in Oslo, as expected.")]
    d = diagnose(steps)
    assert d.fault_type == NONE_FOUND and d.step is None and d.confidence == 0.0


def test_empty_episode() -> None:
    d = diagnose_episodes(RuleDiagnoser(), [EpisodeTrace("t", None, ())])[0]
    assert d.fault_type == NONE_FOUND


def test_diagnosis_ignores_ground_truth_attributes() -> None:
    base = healthy_prefix() + [llm_record(2, content="All good, finished.")]
    labelled = healthy_prefix() + [llm_record(2, content="All good, finished.",
                                              fault=fault_attrs("error", "content"))]
    assert diagnose(base) == diagnose(labelled)


def test_every_rule_is_documented() -> None:
    assert len({r.name for r in RULES}) == len(RULES)
    for r in RULES:
        assert r.kind in ("llm", "tool") and len(r.doc) > 20


def test_genai_trace_with_captured_content_only() -> None:
    """A trace from another GenAI instrumentation: no agentchaos signals, content captured."""
    def step(i: int, message: dict[str, Any], finish: str) -> StepRecord:
        attrs = {A.GEN_AI_OPERATION_NAME: A.OP_CHAT, A.GEN_AI_RESPONSE_FINISH_REASONS: [finish],
                 A.GEN_AI_OUTPUT_MESSAGES: json.dumps([message])}
        return StepRecord(i, f"s{i}", "llm", "chat gpt-x", i * 10**9, i * 10**9 + 5 * 10**8, attributes=attrs)
    steps = [step(0, {"role": "assistant", "content": "Looking it up."}, "stop"),
             step(1, {"role": "assistant", "content": "HTTP/1.1 502 Bad Gateway"}, "stop")]
    d = diagnose(steps)
    assert (d.fault_type, d.step) == ("error", 1)


def test_openinference_trace() -> None:
    def llm(i: int, content: str) -> StepRecord:
        attrs = {A.OI_SPAN_KIND: "LLM", "llm.output_messages.0.message.role": "assistant",
                 "llm.output_messages.0.message.content": content, A.OI_LLM_TOKEN_COUNT_COMPLETION: 10}
        return StepRecord(i, f"s{i}", "llm", "ChatCompletion", i * 10**9, i * 10**9 + 10**8, attributes=attrs)

    def tool(i: int, out: Any) -> StepRecord:
        attrs = {A.OI_SPAN_KIND: "TOOL", A.OI_TOOL_NAME: "search", A.OI_OUTPUT_VALUE: json.dumps(out)}
        return StepRecord(i, f"s{i}", "tool", "search", i * 10**9, i * 10**9 + 10**7, attributes=attrs)
    steps = [llm(0, "Searching."), tool(1, {"hits": [1, 2], "total": 2}), llm(2, "Again."),
             tool(3, {"error": "rate_limit", "status": 429}), llm(4, "Giving up.")]
    d = diagnose(steps)
    assert (d.fault_type, d.target, d.step) == ("rate_limit", "tool_result", 3)


def test_a_langgraph_tool_run_traced_by_openinference_is_read_by_its_message_content() -> None:
    """OpenInference's LangChain tracer records a tool run's output as the serialized ToolMessage;
    the tool's answer is its content, a text (a FHIR OperationOutcome here) or text blocks."""
    def tool(i: int, content: Any) -> StepRecord:
        message = {"type": "tool", "data": {"content": content, "type": "tool", "name": "search",
                                            "tool_call_id": f"call_{i}", "status": "success"}}
        attrs = {A.OI_SPAN_KIND: "TOOL", A.OI_TOOL_NAME: "search", A.OI_OUTPUT_VALUE: json.dumps(message)}
        return StepRecord(i, f"s{i}", "tool", "search", i * 10**9, i * 10**9 + 10**7, attributes=attrs)
    outcome = {"resourceType": "OperationOutcome", "issue": [{"severity": "error", "code": "timeout",
                                                              "diagnostics": "The search did not complete in time"}]}
    steps = [llm_record(0, content=None, tool_calls=[WEATHER]), tool(1, json.dumps({"hits": [1, 2]})),
             llm_record(2, content=None, tool_calls=[WEATHER]), tool(3, json.dumps(outcome)),
             llm_record(4, content="Giving up.")]
    d = diagnose(steps)
    assert (d.fault_type, d.step) == ("timeout", 3), d
    blocks = [*steps[:3], tool(3, [{"type": "text", "text": json.dumps(outcome)}]), steps[4]]
    assert (diagnose(blocks).fault_type, diagnose(blocks).step) == ("timeout", 3)


SNAKE_RESULTS = [("get_population", {"city": "Oslo", "population": 700000, "data_source": "sim"}),
                 ("get_weather", {"city": "Oslo", "temperature_c": 4.5, "data_source": "sim"})]


def _tools_then(result: dict[str, Any], name: str = "get_timezone") -> list[StepRecord]:
    steps: list[StepRecord] = []
    for tool, res in [*SNAKE_RESULTS, (name, result)]:
        steps.append(llm_record(len(steps), content=None, tool_calls=[WEATHER]))
        steps.append(tool_record(len(steps), tool, res))
    return steps


@pytest.mark.parametrize("result,rule", [
    ({"CITY": "Oslo", "UtcOffset": 1, "data_source": "sim"}, "tool_key_style"),
    ({"city-name": "Oslo", "utc-offset": 1, "data_source": "sim"}, "tool_key_style"),
    ({"city_value": "Oslo", "utc": 1, "data_source_value": "sim"}, "tool_envelope_keys"),
])
def test_first_call_of_a_tool_judged_against_the_episode(result: dict[str, Any], rule: str) -> None:
    d = diagnose(_tools_then(result))
    assert (d.fault_type, d.step, d.rule) == ("key_rename", 5, rule)


def test_a_listings_paging_members_in_another_convention_are_not_a_rename() -> None:
    page = {"city": "Oslo", "data_source": "sim", "zones": [{"zone_name": "CET"}], "hasMore": True,
            "totalResults": 3, "nextPageToken": "p2"}
    assert diagnose(_tools_then(page)).fault_type == NONE_FOUND
    renamed = {"city": "Oslo", "data_source": "sim", "zoneName": "CET", "utcOffset": 1}
    assert diagnose(_tools_then(renamed)).fault_type == "key_rename"  # record keys still count


def test_envelope_key_missing_without_respelling_is_weak_truncation() -> None:
    d = diagnose(_tools_then({"city": "Oslo"}))
    assert (d.fault_type, d.step, d.rule) == ("truncated", 5, "tool_envelope_keys")


def test_one_odd_key_is_weak_unless_numbers_became_strings() -> None:
    weak = diagnose(_tools_then({"city": "Oslo", "utcOffset": 1, "data_source": "sim"}))
    assert weak.rule == "tool_key_style" and weak.confidence < 0.5
    strong = diagnose(_tools_then({"city": "Oslo", "utcOffset": "1", "data_source": "sim"}) +
                      [llm_record(6, content="[API ERROR] HTTP 500")])
    assert (strong.fault_type, strong.step) == ("key_rename", 5)


def test_consistent_camel_case_api_is_not_renamed() -> None:
    steps = [llm_record(0, content=None, tool_calls=[WEATHER]),
             tool_record(1, "a", {"cityName": "Oslo", "dataSource": "x"}),
             llm_record(2, content=None, tool_calls=[WEATHER]),
             tool_record(3, "b", {"utcOffset": 1, "dataSource": "x", "cityName": "Oslo"})]
    assert diagnose(steps).fault_type == NONE_FOUND


def test_echoed_identifier_with_another_value_is_wrong_value() -> None:
    book = ("book_flight", {"flight_id": 4012})
    steps = [llm_record(0, content=None, tool_calls=[book], request_tools=[]),
             tool_record(1, "book_flight", {"booking_id": "B7", "flight_id": 4013, "status": "confirmed"},
                         args=book[1]),
             llm_record(2, content="Booked.")]
    d = diagnose(steps)
    assert (d.fault_type, d.target, d.step, d.rule) == ("wrong_value", "tool_result", 1, "tool_echo_mismatch")
    same = [steps[0], tool_record(1, "book_flight", {"booking_id": "B7", "flight_id": 4012}, args=book[1]),
            steps[2]]
    assert diagnose(same).fault_type == NONE_FOUND
    converted = ("convert", {"value": 21, "unit": "f"})
    assert diagnose([llm_record(0, content=None, tool_calls=[converted], request_tools=[]),
                     tool_record(1, "convert", {"value": 69.8, "unit": "f"}, args=converted[1]),
                     llm_record(2, content="69.8 F")]).fault_type == NONE_FOUND


def _asked(step: int, calls: list[tuple[str, dict[str, Any]]], said: str) -> StepRecord:
    """An LLM step whose argument grounding is computed against a conversation that said ``said``."""
    wire = [{"function": {"name": n, "arguments": json.dumps(a)}} for n, a in calls]
    grounding = signals.argument_grounding(wire, [{"role": "user", "content": said}])
    return llm_record(step, content=None, tool_calls=calls, extra=grounding)


def test_argument_naming_an_entity_nobody_mentioned_is_wrong_value() -> None:
    steps = [_asked(0, [("get_weather", {"city": "Springfield", "unit": "c"})], "Weather in Oslo?"),
             tool_record(1, "get_weather", {**RESULT, "city": "Springfield"}, args={"city": "Springfield"}),
             llm_record(2, content="It is 4.5 C in Springfield.")]
    d = diagnose(steps)
    assert (d.fault_type, d.target, d.step, d.rule) == ("wrong_value", "tool_calls", 0, "ungrounded_arguments")


def test_grounded_arguments_find_nothing_and_habitual_invention_is_less_telling() -> None:
    grounded = [_asked(0, [WEATHER], "Weather in Oslo?"), tool_record(1, "get_weather", RESULT, args=WEATHER[1]),
                llm_record(2, content="4.5 C.")]
    assert diagnose(grounded).fault_type == NONE_FOUND
    once = [_asked(0, [("get_weather", {"city": "Bergen"})], "Weather in Oslo?"),
            tool_record(1, "get_weather", RESULT, args={"city": "Bergen"}), llm_record(2, content="Done.")]
    habit = [*once[:2], _asked(2, [("get_weather", {"city": "Tromso"})], "Weather in Oslo?"),
             tool_record(3, "get_weather", RESULT, args={"city": "Tromso"}), llm_record(4, content="Done.")]
    single, habitual = diagnose(once), diagnose(habit)
    assert single.fault_type == habitual.fault_type == "wrong_value"
    assert habitual.confidence < 0.3 < single.confidence < CONFIDENCE_MIN  # weak alone: never a verdict


def test_vowel_free_keys_are_a_rename_when_the_episode_spells_keys_out() -> None:
    d = diagnose(_tools_then({"rgn": "Oslo", "utc_offst": 1, "data_source": "sim"}))
    assert (d.fault_type, d.step, d.rule) == ("key_rename", 5, "tool_key_style")
    assert diagnose(_tools_then({"city": "Oslo", "utc_offset": 1, "data_source": "sim", "html": "x",
                                 "wind_kph": 3})).fault_type == NONE_FOUND


def test_a_rename_first_seen_without_a_norm_is_blamed_where_it_started() -> None:
    steps = [llm_record(0, content=None, tool_calls=[WEATHER]),
             tool_record(1, "get_weather", {"rslt": "Oslo"}),  # first result: a thin norm, weak
             llm_record(2, content=None, tool_calls=[WEATHER]),
             tool_record(3, "get_population", {"city": "Oslo", "population": 700000, "data_source": "sim"}),
             llm_record(4, content=None, tool_calls=[WEATHER]),
             tool_record(5, "get_timezone", {"CITY_NAME": "Oslo", "UTC_OFFSET": 1, "data_source": "sim"}),
             llm_record(6, content="Done.")]
    d = diagnose(steps)
    assert (d.fault_type, d.step) == ("key_rename", 1)


def test_null_result_of_an_action_tool_is_not_an_empty_result() -> None:
    steps = [llm_record(0, content=None, tool_calls=[("mkdir", {"name": "docs"})], request_tools=[]),
             tool_record(1, "mkdir", None),
             llm_record(2, content=None, tool_calls=[WEATHER]),
             tool_record(3, "get_weather", {"error": "Rate limit exceeded", "status": 429}),
             llm_record(4, content="Failed.")]
    d = diagnose(steps)
    assert (d.fault_type, d.step) == ("rate_limit", 3)
    # The same null where the tool returned data before is an empty result.
    again = [steps[0], tool_record(1, "mkdir", {"created": "d"}), steps[2], tool_record(3, "mkdir", None),
             steps[4]]
    d = diagnose(again)
    assert (d.fault_type, d.step) == ("empty", 3)


def test_short_upper_case_acronyms_are_not_a_rename() -> None:
    assert diagnose(_tools_then({"city": "Oslo", "MA(20)": 1.5, "ID": 3, "data_source": "sim"}
                                )).fault_type == NONE_FOUND


def _as_recorded_before_the_vocabulary(step: StepRecord) -> StepRecord:
    for key in (A.RESPONSE_CONTENT_FAILURE, A.RESPONSE_CONTENT_FAILURE_EVIDENCE):
        step.attributes.pop(key, None)
    return step


def test_replies_recorded_before_the_vocabulary_are_read_from_their_error_markers() -> None:
    """A store written by an earlier version has error markers and no meaning on its replies: an
    error form among the markers still makes the reply an error report; a word alone does not."""
    report = llm_record(2, content="[API ERROR] HTTP 500: Internal Server Error.")
    assert report.attributes[A.RESPONSE_CONTENT_FAILURE] == "error"
    old = diagnose(healthy_prefix() + [_as_recorded_before_the_vocabulary(report)])
    assert (old.fault_type, old.step) == ("error", 2) and "earlier recording" in old.evidence
    prose = llm_record(2, content="Rate limits apply to this API; Oslo is 4.5 C with rain.")
    assert prose.attributes[A.RESPONSE_CONTENT_FAILURE] == ""  # written on every reply, "" when none
    assert diagnose(healthy_prefix() + [prose]).fault_type == NONE_FOUND
    assert diagnose(healthy_prefix() + [_as_recorded_before_the_vocabulary(prose)]).fault_type == NONE_FOUND


def test_the_more_specific_of_status_and_body_names_a_failed_call() -> None:
    over_quota = llm_record(0, content=None, status_code=402,
                            extra={A.RESPONSE_FAILURE: "invalid_request",
                                   A.RESPONSE_FAILURE_EVIDENCE: "error_member openai:invalid_request_error"})
    assert diagnose([over_quota]).fault_type == "rate_limit"
    bad = llm_record(0, content=None, status_code=400, extra={A.RESPONSE_FAILURE: "not_found"})
    assert diagnose([bad]).fault_type == "not_found"  # a plain 4xx takes the body's more specific meaning
    # ... but not a less specific one: a 403 whose body names the catch-all invalid_request_error
    restricted = llm_record(0, content=None, status_code=403,
                            extra={A.RESPONSE_FAILURE: "invalid_request",
                                   A.RESPONSE_FAILURE_EVIDENCE: "error_member openai:invalid_request_error"})
    assert diagnose([restricted]).fault_type == "auth"
    login = llm_record(0, content=None, status_code=400, extra={A.RESPONSE_FAILURE: "auth"})
    assert diagnose([login]).fault_type == "auth"


def test_a_not_found_after_an_unmentioned_value_is_a_slip_unless_the_episode_always_uses_such_values() -> None:
    missing = {"error": {"code": "NotFound", "message": "no such city"}}
    once = [_asked(0, [("get_weather", {"city": "Bergen"})], "Weather in Oslo?"),
            tool_record(1, "get_weather", missing, args={"city": "Bergen"}), llm_record(2, content="Sorry.")]
    assert diagnose(once).fault_type != "not_found"  # the model asked about a city nobody mentioned
    habit = [_asked(0, [("get_weather", {"city": "Bergen"})], "Weather in Oslo?"),
             tool_record(1, "get_weather", RESULT, args={"city": "Bergen"}),
             _asked(2, [("get_weather", {"city": "Tromso"})], "Weather in Oslo?"),
             tool_record(3, "get_weather", missing, args={"city": "Tromso"}), llm_record(4, content="Sorry.")]
    d = diagnose(habit)
    assert (d.fault_type, d.step) == ("not_found", 3)


def _invoice_reads(first: dict[str, Any], later: int = 2) -> list[StepRecord]:
    """``get_invoice`` answered ``first`` on its first call, then the usual answer ``later`` times (for
    other invoices, so no call is a retry of another)."""
    usual = {"invoice_id": "INV-1", "amount": 120.0, "currency": "EUR", "due": "2026-01-31", "issued": "2026-01-01",
             "po": "PO-7"}
    steps: list[StepRecord] = []
    for n, res in enumerate([first] + [usual] * later, start=1):  # other invoices: no call is a retry
        res = {**res, "invoice_id": f"INV-{n}"}
        steps.append(llm_record(len(steps), content=None, tool_calls=[("get_invoice", {"invoice_id": f"INV-{n}"})]))
        steps.append(tool_record(len(steps), "get_invoice", res, args={"invoice_id": f"INV-{n}"}))
    steps.append(llm_record(len(steps), content="Posted."))
    return steps


def test_a_first_answer_is_the_odd_one_when_later_answers_agree() -> None:
    lost = _invoice_reads({"invoice_id": "INV-1", "currency": "EUR"})
    d = diagnose(lost)
    assert (d.fault_type, d.step) == ("truncated", 1) and d.confidence >= CONFIDENCE_MIN
    renamed = _invoice_reads({"invoice_id": "INV-1", "amount_due": 120.0, "currency": "EUR", "due": "2026-01-31",
                              "issued": "2026-01-01", "po": "PO-7"})
    d = diagnose(renamed)
    assert (d.fault_type, d.step) == ("key_rename", 1) and d.confidence >= CONFIDENCE_MIN
    # one later answer is no norm: the first answer is not judged odd against it
    assert diagnose(_invoice_reads({"invoice_id": "INV-1", "currency": "EUR"}, later=1)).confidence < CONFIDENCE_MIN
    # a different key that spells none of the norm's does not make the first answer a renamed one
    other = _invoice_reads({"invoice_id": "INV-1", "amount": 120.0, "currency": "EUR", "due": "2026-01-31",
                            "issued": "2026-01-01", "memo": "x"})
    assert diagnose(other).step != 1


def test_keys_renamed_inside_a_listings_records_are_a_rename() -> None:
    rows = [{"txn_id": "T1", "booked": "2026-01-02", "amount": 10.0, "reference": "INV-1"}]
    healthy = {"city": "Oslo", "data_source": "sim", "transactions": rows}
    assert diagnose(_tools_then(healthy, "list_bank_transactions")).fault_type == NONE_FOUND
    iso = {"AcctSvcrRef": "T1", "booked": "2026-01-02", "amount": 10.0, "RmtInf.Ustrd": "INV-1"}
    renamed = {"city": "Oslo", "data_source": "sim", "transactions": [iso]}
    d = diagnose(_tools_then(renamed, "list_bank_transactions"))
    assert (d.fault_type, d.step) == ("key_rename", 5) and d.confidence >= CONFIDENCE_MIN
    # a top-level list of records is read the same way
    d = diagnose(_tools_then([{"ZONE_NAME": "CET", "UTC_OFFSET": 1}], "list_zones"))  # type: ignore[arg-type]
    assert (d.fault_type, d.step) == ("key_rename", 5)


def test_one_more_digit_string_than_another_record_is_no_conversion() -> None:
    """Two patients of one tool: the second has a phone number written as digits, the first none.
    That is the record's own data; an answer whose amounts all became strings is a conversion."""
    first = {"id": "p1", "name": "Ada", "age": 36, "balance": 12.5, "visits": 3, "phone": None}
    steps = [llm_record(0, content=None, tool_calls=[WEATHER]), tool_record(1, "get_patient", first),
             llm_record(2, content=None, tool_calls=[WEATHER]),
             tool_record(3, "get_patient", {**first, "id": "p2", "name": "Bo", "phone": "5551234"}),
             llm_record(4, content="Done.")]
    d = diagnose(steps)
    assert d.fault_type == NONE_FOUND or d.confidence < 0.5, d
    converted = {**first, "id": "p2", "age": "41", "balance": "7.25", "visits": "2"}
    steps[3] = tool_record(3, "get_patient", converted)
    d = diagnose(steps)
    assert (d.fault_type, d.step) == ("key_rename", 3), d
