"""Each step-prefix feature pinned on hand-built traces."""

from __future__ import annotations

import math

import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.trace.annotate import entropy_attributes
from predictors.features import (
    ENTROPY_FEATURES,
    EXTERNAL_FEATURES,
    FEATURE_SETS,
    OBSERVED_KEYS,
    FeatureState,
    feature_names,
    has_logprobs,
    prefix_features,
    prefix_table,
    tool_changed_state,
)
from tests.predictors.test_synth import entropy_attrs, episode, llm_step, synthetic_corpus, tool_step


def last(steps: list) -> dict[str, float]:
    return prefix_features(episode(steps))[-1]


def test_one_row_per_step_prefix_and_cumulative() -> None:
    rows = prefix_features(episode([llm_step(0), tool_step(1, error=True), llm_step(2), tool_step(3)]))
    assert [r["steps"] for r in rows] == [1, 2, 3, 4]
    assert [r["tool_errors"] for r in rows] == [0, 1, 1, 1]
    assert [r["tool_error_rate"] for r in rows] == [0, 1, 1, 0.5]
    assert [r["last_tool_error"] for r in rows] == [0, 1, 1, 0]


def test_steps_are_taken_in_step_order_not_list_order() -> None:
    ordered = prefix_features(episode([llm_step(0), tool_step(1, error=True), llm_step(2)]))
    shuffled = prefix_features(episode([llm_step(2), llm_step(0), tool_step(1, error=True)]))
    assert ordered == shuffled


def test_tool_error_sources() -> None:
    steps = [tool_step(0, status="ERROR"), tool_step(1, error=True),
             tool_step(2, extra={A.TOOL_RESULT_ERROR_MARKER: "rate_limit"}), tool_step(3)]
    f = last(steps)
    assert f["tool_errors"] == 3
    assert f["tool_calls"] == 4
    assert f["tool_error_rate"] == 0.75


def test_malformed_and_empty_tool_results() -> None:
    cut = {A.TOOL_RESULT_JSON_LIKE: True, A.TOOL_RESULT_IS_JSON: False}
    fine = {A.TOOL_RESULT_JSON_LIKE: True, A.TOOL_RESULT_IS_JSON: True}
    text = {A.TOOL_RESULT_JSON_LIKE: False, A.TOOL_RESULT_IS_JSON: False}
    f = last([tool_step(0, extra=cut), tool_step(1, extra=fine), tool_step(2, extra=text),
              tool_step(3, empty=True), tool_step(4)])
    assert f["tool_malformed_results"] == 1
    assert f["tool_empty_results"] == 1
    assert f["tool_errors"] == 0


def test_retry_is_same_name_and_args_within_three_tool_calls() -> None:
    steps = [tool_step(0, "mkdir", "x"), tool_step(1, "mkdir", "x"),       # retry
             tool_step(2, "mkdir", "y"), tool_step(3, "cd", "x"),          # other args / other tool
             tool_step(4, "ls", "z"), tool_step(5, "pwd", "w"),
             tool_step(6, "mkdir", "x")]                                     # 5 tool calls later: not a retry
    assert [r["retries"] for r in prefix_features(episode(steps))] == [0, 1, 1, 1, 1, 1, 1]
    # The window counts tool calls, not steps: LLM steps in between do not push a call out.
    interleaved = [tool_step(0, "mkdir", "x"), llm_step(1), llm_step(2), llm_step(3), llm_step(4),
                   tool_step(5, "mkdir", "x")]
    assert last(interleaved)["retries"] == 1
    at_window_edge = [tool_step(0, "a", "1"), tool_step(1, "b", "1"), tool_step(2, "c", "1"),
                      tool_step(3, "a", "1")]
    assert last(at_window_edge)["retries"] == 1


def test_calls_with_unknown_arguments_never_count_as_retries_but_fill_the_window() -> None:
    steps = [tool_step(0, "mkdir", None), tool_step(1, "mkdir", None)]
    assert last(steps)["retries"] == 0
    pushed_out = [tool_step(0, "a", "1"), tool_step(1, "b", None), tool_step(2, "c", None),
                  tool_step(3, "d", None), tool_step(4, "a", "1")]
    assert last(pushed_out)["retries"] == 0


def test_retry_uses_captured_arguments_when_no_digest() -> None:
    args = {A.GEN_AI_TOOL_CALL_ARGUMENTS: '{"path": "/tmp"}'}
    steps = [tool_step(0, "mkdir", None, extra=args), tool_step(1, "mkdir", None, extra=args)]
    assert last(steps)["retries"] == 1


def test_llm_repeat_calls_from_response_digests() -> None:
    steps = [llm_step(0, tool_names=["a"], args_digest="p"), llm_step(1, tool_names=["a"], args_digest="p"),
             llm_step(2, tool_names=["b"], args_digest="p"), llm_step(3, tool_calls=0, content_length=5)]
    assert last(steps)["llm_repeat_calls"] == 1


def test_declared_state_change_wins_over_the_name_rule() -> None:
    assert tool_changed_state(tool_step(0, "get_x", state_changed=True))
    assert not tool_changed_state(tool_step(0, "mkdir", state_changed=False))


@pytest.mark.parametrize(("name", "changed"), [
    ("mkdir", True), ("post_tweet", True), ("buy_ticket", True), ("cd", True),
    ("get_balance", False), ("list_files", False), ("ls", False), ("cat", False), ("getUser", False),
    ("GorillaFileSystem.ls", False), ("TwitterAPI.post_tweet", True), ("fs__grep", False),
    ("gettysburg_reset", True),
])
def test_read_only_name_rule(name: str, changed: bool) -> None:
    assert tool_changed_state(tool_step(0, name)) is changed


def test_failed_or_empty_tool_calls_never_change_state() -> None:
    assert not tool_changed_state(tool_step(0, "mkdir", error=True))
    assert not tool_changed_state(tool_step(0, "mkdir", empty=True))
    assert not tool_changed_state(tool_step(0, "mkdir", status="ERROR"))


def test_no_change_run_counts_steps_since_last_state_change() -> None:
    steps = [llm_step(0), tool_step(1, "mkdir"),                       # change -> run 0
             llm_step(2), tool_step(3, "get_balance"),                 # run 2
             llm_step(4), tool_step(5, "mkdir", error=True),           # run 4
             llm_step(6), tool_step(7, "touch"),                       # change -> 0
             llm_step(8)]                                              # 1
    rows = prefix_features(episode(steps))
    assert [r["no_change_run"] for r in rows] == [1, 0, 1, 2, 3, 4, 5, 0, 1]
    assert rows[-1]["max_no_change_run"] == 5
    assert rows[-1]["state_changes"] == 2


def test_text_answers_empty_responses_length_and_llm_errors() -> None:
    steps = [llm_step(0, tool_calls=0, content_length=42),
             llm_step(1, tool_calls=0, content_length=0),
             llm_step(2, tool_calls=0, content_length=10, finish="length"),
             llm_step(3, tool_calls=0, content_length=80, error_marker="http_status"),
             llm_step(4, status="ERROR", tool_calls=0, content_length=0),
             llm_step(5, extra={A.RESPONSE_STATUS_CODE: 503})]
    rows = prefix_features(episode(steps))
    f = rows[-1]
    assert f["text_answers"] == 2          # error text is counted as an LLM error, not an answer
    assert f["empty_responses"] == 1       # a failed call is not an empty answer
    assert f["length_finishes"] == 1
    assert f["llm_errors"] == 3
    assert [r["last_text_answer"] for r in rows] == [1, 0, 1, 0, 0, 0]


def test_missing_response_signals_are_not_guessed() -> None:
    bare = llm_step(0)
    for key in (A.RESPONSE_TOOL_CALL_COUNT, A.RESPONSE_CONTENT_LENGTH):
        bare.attributes.pop(key)
    f = last([bare])
    assert f["text_answers"] == 0 and f["empty_responses"] == 0


def test_token_and_latency_features() -> None:
    steps = [llm_step(0, input_tokens=100, output_tokens=10, duration_ms=100),
             tool_step(1, duration_ms=999),
             llm_step(2, input_tokens=300, output_tokens=30, duration_ms=300)]
    f = last(steps)
    assert f["log_input_tokens_last"] == pytest.approx(math.log1p(300))
    assert f["log_output_tokens_mean"] == pytest.approx(math.log1p(20))
    assert f["log_llm_latency_ms_mean"] == pytest.approx(math.log1p(200))
    assert f["log_llm_latency_ms_last"] == pytest.approx(math.log1p(300))


def _tokens(*dists: list[float]) -> list[dict]:
    return [{"token": "x", "logprob": math.log(d[0]),
             "top_logprobs": [{"token": str(i), "logprob": math.log(p)} for i, p in enumerate(d)]}
            for d in dists]


def test_entropy_features_from_known_logprobs() -> None:
    # Call 1: two tokens, uniform over two (ln 2) then certain (0): mean ln2/2, max ln2, mass 1.
    # Call 2: one token, 0.9/0.05 (mass 0.95).
    call1 = entropy_attributes(_tokens([0.5, 0.5], [1.0]))
    call2 = entropy_attributes(_tokens([0.9, 0.05]))
    h2 = -(0.9 * math.log(0.9) + 0.05 * math.log(0.05))
    assert call1[A.LOGPROBS_ENTROPY_MEAN] == pytest.approx(math.log(2) / 2)
    assert call2[A.LOGPROBS_TOP_MASS] == pytest.approx(0.95)
    steps = [llm_step(0, entropy=call1), tool_step(1), llm_step(2, entropy=call2), llm_step(3)]
    rows = prefix_features(episode(steps))
    f = rows[-1]
    # Token-weighted: (ln2 + 0 + h2) / 3 tokens.
    assert f["entropy_mean"] == pytest.approx((math.log(2) + h2) / 3)
    assert f["entropy_max"] == pytest.approx(math.log(2))
    assert f["entropy_last"] == pytest.approx(h2)           # latest call that had logprobs
    assert f["entropy_last_token"] == pytest.approx(h2)
    assert f["entropy_trend"] == pytest.approx(h2 - math.log(2) / 2)
    assert f["top_mass_mean"] == pytest.approx((1.0 + 0.95) / 2)
    assert f["top_mass_min"] == pytest.approx(0.95)
    assert f["logprob_coverage"] == pytest.approx(2 / 3)    # 3 LLM calls, 2 with logprobs
    assert rows[0]["entropy_trend"] == 0.0


def test_entropy_trend_is_least_squares_slope_over_last_five_calls() -> None:
    means = [0.9, 0.1, 0.2, 0.3, 0.4, 0.5]      # first one falls out of the window
    steps = [llm_step(i, entropy=entropy_attrs(m)) for i, m in enumerate(means)]
    assert last(steps)["entropy_trend"] == pytest.approx(0.1)


def test_episode_without_logprobs_has_zero_entropy_features() -> None:
    f = last([llm_step(0), tool_step(1), llm_step(2, tool_calls=0, content_length=3)])
    assert all(f[n] == 0.0 for n in ENTROPY_FEATURES)
    assert not has_logprobs([episode([llm_step(0)])])
    assert has_logprobs([episode([llm_step(0, entropy=entropy_attrs(0.1))])])


def test_ground_truth_is_invisible_to_features() -> None:
    plain = [llm_step(0), tool_step(1, "mkdir"), llm_step(2, tool_calls=0, content_length=4)]
    marked = [llm_step(0, extra={A.ORIGINAL_FINISH_REASONS: ["length"], A.ORIGINAL_OUTPUT_TOKENS: 9999}),
              tool_step(1, "mkdir", extra={A.FAULT_INJECTED: True, A.FAULT_TYPE: "timeout"}),
              llm_step(2, tool_calls=0, content_length=4)]
    assert prefix_features(episode(plain)) == prefix_features(episode(marked))


def test_non_step_kinds_are_ignored_by_the_state() -> None:
    state = FeatureState()
    state.update(llm_step(0))
    before = state.values()
    from dataclasses import replace
    state.update(replace(llm_step(1), kind="other"))
    assert state.values() == before


def test_feature_sets_and_prefix_table() -> None:
    assert FEATURE_SETS["both"] == EXTERNAL_FEATURES + ENTROPY_FEATURES
    assert not set(EXTERNAL_FEATURES) & set(ENTROPY_FEATURES)
    with pytest.raises(ValueError, match="unknown feature set"):
        feature_names("internal")
    eps = synthetic_corpus(3, 1)
    table = prefix_table(eps, feature_names("both"))
    assert len(table.rows) == sum(len(e.steps) for e in eps)
    assert len(table.rows[0]) == len(FEATURE_SETS["both"])
    assert table.episode[0] == 0 and table.episode[-1] == len(eps) - 1
    assert table.step[: len(eps[0].steps)] == list(range(len(eps[0].steps)))
    names = feature_names("both")
    expected = [[vals[n] for n in names] for ep in eps for vals in prefix_features(ep)]
    assert table.rows.dtype == "float64" and table.rows.tolist() == expected  # an array, same values
    assert table == prefix_table(iter(eps), names)  # episodes may come from a stream
    assert table != prefix_table(eps[1:], names)
    empty = prefix_table([], names)
    assert empty.rows.shape == (0, len(names)) and empty.episode == []


class _RecordingDict(dict):
    """Remembers every key a feature asks for, including keys that are absent."""

    seen: set[str] = set()

    def get(self, key, default=None):  # type: ignore[override]
        _RecordingDict.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key):  # type: ignore[override]
        _RecordingDict.seen.add(key)
        return super().__getitem__(key)


def test_features_read_only_the_observed_keys() -> None:
    """The live processor copies only OBSERVED_KEYS from spans; features must not need more."""
    from dataclasses import replace

    _RecordingDict.seen = set()
    for ep in synthetic_corpus(6, 1):
        steps = [replace(s, attributes=_RecordingDict(s.attributes)) for s in ep.steps]
        state = FeatureState()
        for s in steps:
            state.update(s)
            state.values()
    extra = [llm_step(0, status="ERROR", extra={A.RESPONSE_STATUS_CODE: 500}),
             tool_step(1, None, extra={A.GEN_AI_TOOL_CALL_ARGUMENTS: "{}"})]
    state = FeatureState()
    for s in extra:
        state.update(replace(s, attributes=_RecordingDict(s.attributes)))
    assert _RecordingDict.seen
    assert _RecordingDict.seen <= set(OBSERVED_KEYS)
    assert not any(A.is_ground_truth(k) for k in OBSERVED_KEYS)
