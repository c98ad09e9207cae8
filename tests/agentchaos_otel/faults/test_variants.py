"""The held-out variant set: registered, correctly labelled, applicable, and unlike the catalog's markers."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import unicodedata
from typing import Any

import httpx2
import openai
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.faults import anthropic as anth
from agentchaos_otel.faults import catalog as C
from agentchaos_otel.faults import variants as V
from agentchaos_otel.faults.catalog import CATALOG, fault_names, get_fault
from agentchaos_otel.faults.http import (
    EXCEPTION_NAMES,
    error_response,
    exception_class_name,
    exception_message,
    sniff_content_type,
)
from agentchaos_otel.faults.llm_response import (
    CORRUPTION_MODES,
    HOMOGLYPHS,
    REPLACEMENT_CHAR,
    ZERO_WIDTH_CHARS,
    FaultNotApplicable,
    apply_response_fault,
    argument_corrupter,
    corrupt_homoglyph,
    corrupt_replacement,
    corrupt_string,
    corrupt_zero_width,
)
from agentchaos_otel.faults.stream import (
    Stall,
    StreamFaulter,
    assemble_chat_completion,
    render_chat_completion_sse,
)
from agentchaos_otel.inject.call import message_digest
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.plans.plan import FaultRule, resolve_plan
from agentchaos_otel.sse import DONE, SSEParser
from tests.conftest import WEATHER_TOOL

VARIANTS = fault_names("variant")
RESPONSE_VARIANTS = [n for n in VARIANTS if CATALOG[n].target in ("content", "tool_calls")]
HTTP_VARIANTS = [n for n in VARIANTS if CATALOG[n].target == "http"]
STREAM_VARIANTS = [n for n in VARIANTS if CATALOG[n].target == "stream"]
# The first 80 entries, by family, in the order the catalog had before the variant set existed.
FIRST_80_FAMILIES = ("agentchaos", "compound", "positional", "http", "stream")
MARKER_PREFIXES = ("[API ERROR]", "[TIMEOUT]", "[SERVICE UNAVAILABLE]", "[CONTENT FILTERED]")
MARKER_TEXTS = (C.API_ERROR_TEXT, C.TIMEOUT_TEXT, C.TIMEOUT_DROPPED_TEXT, C.SCHEMA_CONTENT_TEXT,
                C.SCHEMA_ARGUMENTS, C.SERVICE_UNAVAILABLE_TEXT, C.CONTENT_FILTERED_TEXT, C.PROXY_HTML_TEXT,
                C.STALE_DATA_ARGUMENTS, C.WRONG_ENTITY_ARGUMENTS)

ANSWER = ("The weather in Paris is sunny with a high of 21 °C near the café terraces — "
          "no rain is expected before the weekend.")
ARGUMENTS = '{"city": "Paris", "unit": "celsius"}'


def openai_text_body() -> dict[str, Any]:
    return {"id": "chatcmpl-BzQ4mS1xk5nBf0Pq7XUvT2yL9cHdA", "object": "chat.completion", "created": 1741569952,
            "model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_f9f4fb6dbf", "service_tier": "default",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER, "refusal": None,
                                                 "annotations": []},
                         "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 41, "completion_tokens": 27, "total_tokens": 68}}


def openai_tool_body() -> dict[str, Any]:
    body = openai_text_body()
    body["choices"][0]["message"].update(content=None, tool_calls=[{
        "id": "call_Xq2mR8vT1pLk9sWz", "type": "function",
        "function": {"name": "get_weather", "arguments": ARGUMENTS}}])
    body["choices"][0]["finish_reason"] = "tool_calls"
    return body


def anthropic_text_body() -> dict[str, Any]:
    return {"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": ANSWER}],
            "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 41, "output_tokens": 27}}


def anthropic_tool_body() -> dict[str, Any]:
    body = anthropic_text_body()
    body["content"] = [{"type": "text", "text": "Let me check."},
                       {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
                        "input": {"city": "Paris", "unit": "celsius"}}]
    body["stop_reason"] = "tool_use"
    return body


def _wants_tool_body(name: str) -> bool:
    return CATALOG[name].target == "tool_calls"


def _string_params(name: str) -> list[str]:
    spec = CATALOG[name]
    return [v for k, v in spec.params.items() if k in ("text", "arguments", "body", "message") and isinstance(v, str)]


# --- registration -----------------------------------------------------------------------------
def test_variant_set_is_registered_after_the_first_80_and_outside_the_65() -> None:
    assert 30 <= len(VARIANTS) <= 45
    assert len(set(VARIANTS)) == len(VARIANTS) and all(n.startswith("v_") for n in VARIANTS)
    names = list(CATALOG)
    first_80 = [n for family in FIRST_80_FAMILIES for n in fault_names(family)]
    assert names[:80] == first_80 == fault_names()  # a default listing never includes the held-out set
    assert names[80:] == VARIANTS == V.held_out_names()
    assert len(C.agentchaos_names()) == 65 and not set(C.agentchaos_names()) & set(VARIANTS)
    assert C.VARIANT_FAMILY == "variant" and "variant" in C.FAMILIES
    for name in VARIANTS:
        assert get_fault(name) is CATALOG[name]


def test_importing_the_variants_module_first_still_builds_the_catalog() -> None:
    """catalog imports variants while it builds; the other import order must work as well."""
    code = ("import agentchaos_otel.faults.variants as V; from agentchaos_otel.faults import catalog as C; "
            "print(len(V.held_out_names()), len(C.CATALOG), len(C.agentchaos_names()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == [str(len(VARIANTS)), str(80 + len(VARIANTS)), "65"]


def test_a_misspelt_variant_name_is_suggested() -> None:
    with pytest.raises(C.UnknownFaultError, match="v_truncate_50"):
        get_fault("v_trunkate_50")


def test_plans_can_name_variants() -> None:
    plan = resolve_plan("v_truncate_50,v_http_500_plain_text")
    rules = plan.experiments[0].rules
    assert [r.spec.name for r in rules] == ["v_truncate_50", "v_http_500_plain_text"]
    rule = FaultRule.from_spec(get_fault("v_stream_cut_after_1"))
    assert (rule.strategy, rule.max_fires, rule.probability) == ("single", 1, 1.0)


@pytest.mark.parametrize("name", VARIANTS)
def test_every_variant_has_one_root_cause_and_a_known_label(name: str) -> None:
    spec = get_fault(name)
    assert spec.name == name and spec.family == "variant"
    assert spec.fault_type in C.fault_types() and spec.fault_type in C.RESPONSE_FAULT_TYPES
    assert spec.target in C.TARGETS
    assert (spec.strategy, spec.max_fires, spec.probability, spec.on_call) == ("single", 1, 1.0, None)
    assert spec.description and "\n" not in spec.description and len(spec.description) < 120
    ops = {"content": C.RESPONSE_OPS, "tool_calls": C.RESPONSE_OPS, "http": C.HTTP_OPS,
           "stream": C.STREAM_OPS}[spec.target]
    assert spec.op in ops
    if spec.target in ("http", "stream"):
        assert spec.guard is False
    elif spec.fault_type != C.CONTENT_FILTER:
        assert spec.guard is True  # like the AgentChaos matrix entry it varies


def test_the_set_covers_every_response_label_and_target() -> None:
    labels = {CATALOG[n].fault_type for n in VARIANTS}
    assert labels >= {"error", "timeout", "empty", "truncate", "corrupt", "schema", "content_filter",
                      "rate_limit", "http_error", "connection", "stream_cut", "latency"}
    assert {CATALOG[n].target for n in VARIANTS} == set(C.TARGETS)
    for label in ("error", "timeout", "empty", "truncate", "corrupt", "schema"):
        assert sum(CATALOG[n].fault_type == label for n in VARIANTS) >= 2, label


def test_labels_are_what_the_taxonomy_reads_the_forms_as() -> None:
    """docs/taxonomy.md ("How our fault catalog reads"): a JSON object delivered as the message
    content is ``schema`` whatever it reports (as AgentChaos's llm_schema object is); a status page
    written into a 200 reply takes its status's meaning with 5xx as ``error`` (504 ``timeout``);
    Envoy's connect error is a lost connection whatever reset reason it names; arguments emptied
    for a tool that requires parameters are ``error``."""
    for name in VARIANTS:
        spec = CATALOG[name]
        text = spec.param("text")
        if spec.op == C.OP_SET_CONTENT and isinstance(text, str) and text.lstrip().startswith("{"):
            assert isinstance(json.loads(text), dict) and spec.fault_type == "schema", name
        elif isinstance(text, str) and "<title>504 " in text:
            assert spec.fault_type == "timeout", name
        elif isinstance(text, str) and text.startswith("upstream connect error"):
            assert spec.fault_type == "connection", name
        if spec.op == C.OP_SET_ARGUMENTS and spec.param("arguments") in ("", "{}"):
            assert (spec.fault_type, spec.target) == ("error", "tool_calls"), name
    assert CATALOG["llm_schema_single"].fault_type == "schema"  # the 65 keep DESIGN 3.1's labels
    assert CATALOG["tool_error_single"].fault_type == "error"
    assert CATALOG["compound_proxy_html"].fault_type == "error"


# --- held out: nothing a rule could have memorised from the catalog -------------------------
def test_variant_texts_are_not_the_catalog_markers() -> None:
    catalog_strings = {v for n in list(CATALOG)[:80] for v in CATALOG[n].params.values() if isinstance(v, str)}
    catalog_strings -= {"length", "stop", "content_filter", "mojibake", "symbols", "latin-1", "{}"}
    texts = [t for n in VARIANTS for t in _string_params(n) if t.strip()]  # "" and "  \n" are no wording
    assert len(texts) >= 20
    for text in texts:
        assert not text.lstrip().startswith(MARKER_PREFIXES), text
        assert not any(marker in text for marker in MARKER_TEXTS if marker), text
        assert text not in catalog_strings, text
    assert len(set(texts)) == len(texts)  # no two variants share a wording


@pytest.mark.parametrize("name", [n for n in HTTP_VARIANTS if CATALOG[n].op == C.OP_HTTP_ERROR])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_http_variant_bodies_differ_from_every_catalog_http_body(name: str, provider: str) -> None:
    err = error_response(get_fault(name), provider, rng=random.Random(0))
    assert err is not None
    for other in fault_names("http"):
        theirs = error_response(get_fault(other), provider, rng=random.Random(0))
        if theirs is not None:
            assert (err.status, err.body) != (theirs.status, theirs.body), other


def test_ratios_and_chunk_counts_differ_from_the_catalog_defaults() -> None:
    assert {CATALOG[n].param("ratio") for n in VARIANTS if CATALOG[n].op == C.OP_TRUNCATE_CONTENT
            and CATALOG[n].fault_type == "truncate"} == {0.1, 0.5, 0.7, 0.4}
    assert all(CATALOG[n].param("after_chunks") != 3 for n in STREAM_VARIANTS if CATALOG[n].param("after_chunks"))
    modes = {CATALOG[n].param("mode") for n in VARIANTS if CATALOG[n].op in (C.OP_CORRUPT_CONTENT,
                                                                          C.OP_STREAM_CORRUPT)}
    assert modes >= {"replacement", "zero_width", "homoglyph"}


# --- applied to realistic bodies --------------------------------------------------------------
def _check_openai_observable(name: str, before: dict[str, Any], after: dict[str, Any]) -> None:
    spec = CATALOG[name]
    old, new = before["choices"][0], after["choices"][0]
    content, calls, finish = new["message"].get("content"), new["message"].get("tool_calls"), new["finish_reason"]
    label = spec.fault_type
    if spec.op == C.OP_SET_CONTENT:
        assert content == spec.params["text"]
    if label == "empty":
        assert not (content or "").strip() and not calls
    elif label == "truncate" and spec.target == "content":
        assert ANSWER.startswith(content) and len(content) < len(ANSWER)
        assert finish == spec.params["finish_reason"]
    elif label == "truncate":
        args = json.loads(calls[0]["function"]["arguments"])
        assert args == {"city": "Pa", "unit": "cel"}  # int(len * 0.5) characters kept
    elif label == "corrupt" and spec.target == "content":
        assert content != ANSWER and finish == "stop"
        if spec.param("mode") == "zero_width":
            assert "".join(ch for ch in content if ch not in ZERO_WIDTH_CHARS) == ANSWER
        if spec.param("mode") == "homoglyph":
            assert len(content) == len(ANSWER) and unicodedata.normalize("NFKC", content) != ANSWER
    elif label == "corrupt":
        args = json.loads(calls[0]["function"]["arguments"])  # still valid JSON
        assert set(args) == {"city", "unit"} and args != json.loads(ARGUMENTS)
    elif label == "content_filter":
        assert finish == "content_filter" and content != ANSWER and not calls
    elif spec.op == C.OP_DROP_TOOL_CALLS and spec.target == "tool_calls":  # an error text instead of the calls
        assert calls == [] and content == spec.params["text"]
    elif spec.target == "tool_calls":  # arguments replaced: error, schema
        assert calls[0]["function"]["arguments"] == spec.params["arguments"]
    assert old["message"] != new["message"] or old["finish_reason"] != new["finish_reason"]


@pytest.mark.parametrize("name", RESPONSE_VARIANTS)
def test_response_variant_changes_an_openai_body(name: str) -> None:
    body = openai_tool_body() if _wants_tool_body(name) else openai_text_body()
    snapshot = json.dumps(body, sort_keys=True)
    out = apply_response_fault(get_fault(name), body, rng=random.Random(7))
    assert json.dumps(body, sort_keys=True) == snapshot  # the provider's original is untouched
    assert message_digest("openai", out) != message_digest("openai", body)
    assert out["id"] == body["id"] and out["usage"] == body["usage"]
    _check_openai_observable(name, body, out)


@pytest.mark.parametrize("name", RESPONSE_VARIANTS)
def test_response_variant_changes_an_anthropic_body(name: str) -> None:
    body = anthropic_tool_body() if _wants_tool_body(name) else anthropic_text_body()
    out = anth.apply_response_fault(get_fault(name), body, rng=random.Random(7))
    assert message_digest("anthropic", out) != message_digest("anthropic", body)
    if get_fault(name).fault_type == "content_filter":
        assert out["stop_reason"] == "refusal"


@pytest.mark.parametrize("name", RESPONSE_VARIANTS)
def test_response_variant_is_reproducible_from_its_seed(name: str) -> None:
    body = openai_tool_body() if _wants_tool_body(name) else openai_text_body()
    a = apply_response_fault(get_fault(name), body, rng=random.Random(3))
    b = apply_response_fault(get_fault(name), body, rng=random.Random(3))
    assert a == b


def _run_stream(name: str, raw: bytes) -> tuple[list[bytes | Stall], StreamFaulter]:
    faulter = StreamFaulter(get_fault(name), random.Random(5))
    parser = SSEParser()
    out: list[bytes | Stall] = []
    for i in range(0, len(raw), 37):  # network-sized pieces that split events and characters
        for event in parser.feed(raw[i:i + 37]):
            out += faulter.process(event)
    for event in parser.close():
        out += faulter.process(event)
    out += faulter.finish()
    return out, faulter


@pytest.mark.parametrize("name", STREAM_VARIANTS)
def test_stream_variant_changes_an_sse_stream(name: str) -> None:
    body = openai_text_body()
    raw = render_chat_completion_sse(body, chunk_chars=8)
    out, faulter = _run_stream(name, raw)
    data = b"".join(x for x in out if isinstance(x, bytes))
    stalls = [x for x in out if isinstance(x, Stall)]
    assert faulter.changed
    parser = SSEParser()
    got = assemble_chat_completion(parser.feed(data) + parser.close())
    content, finish = got["choices"][0]["message"]["content"], got["choices"][0]["finish_reason"]
    spec = get_fault(name)
    if spec.fault_type == "stream_cut":
        assert finish is None and not data.endswith(DONE)
        assert content == ANSWER[:8 * spec.params["after_chunks"]]
    elif spec.fault_type == "truncate":
        assert finish == "length" and content == ANSWER[:8] and data.endswith(DONE)
    elif spec.fault_type == "corrupt":
        assert finish == "stop" and len(content) == len(ANSWER) and content != ANSWER
        assert REPLACEMENT_CHAR in content
    elif spec.fault_type == "latency":
        assert data == raw and stalls == [Stall(spec.params["seconds"])]
        before = b"".join(x for x in out[:out.index(stalls[0])] if isinstance(x, bytes))
        assert b'"role":"assistant"' in before and ANSWER[:8].encode() not in before  # before the first token
    if spec.fault_type != "latency":
        assert data != raw and not stalls


@pytest.mark.parametrize("name", HTTP_VARIANTS)
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_http_variant_gives_an_error_response_or_an_exception(name: str, provider: str) -> None:
    spec = get_fault(name)
    if spec.op == C.OP_RAISE:
        assert exception_class_name(spec) in EXCEPTION_NAMES and exception_message(spec)
        assert error_response(spec, provider) is None
        assert spec.fault_type == ("timeout" if "Timeout" in spec.params["exception"] else "connection")
        return
    err = error_response(spec, provider, model="gpt-4o", rng=random.Random(1))
    assert err is not None and err.status == spec.params["status"] and err.body
    assert (err.status == 429) == (spec.fault_type == "rate_limit")
    if err.content_type.startswith("application/json"):
        json.loads(err.body)
    if "body" in spec.params:
        assert err.body.decode() == spec.params["body"]


# --- the new corruption modes -----------------------------------------------------------------
def test_replacement_mode_replaces_an_exact_share() -> None:
    text = "abcdefghijklmnopqrst"
    out = corrupt_replacement(text, random.Random(1), 0.25)
    assert len(out) == len(text) and out.count(REPLACEMENT_CHAR) == 5
    assert all(a == b for a, b in zip(text, out, strict=True) if b != REPLACEMENT_CHAR)
    assert corrupt_replacement("x", random.Random(1), 0.01) == REPLACEMENT_CHAR  # at least one
    assert corrupt_replacement("", random.Random(1)) == ""


def test_zero_width_mode_is_invisible_but_changes_the_text() -> None:
    out = corrupt_zero_width(ANSWER, random.Random(2), 0.3)
    inserted = [ch for ch in out if ch in ZERO_WIDTH_CHARS]
    assert len(inserted) == int(len(ANSWER) * 0.3) and out != ANSWER
    assert "".join(ch for ch in out if ch not in ZERO_WIDTH_CHARS) == ANSWER
    assert all(unicodedata.category(ch) == "Cf" for ch in ZERO_WIDTH_CHARS)


def test_homoglyph_mode_swaps_look_alikes_only() -> None:
    out = corrupt_homoglyph("Paris is cool", random.Random(3), 1.0)
    back = {v: k for k, v in HOMOGLYPHS.items()}
    assert out != "Paris is cool" and "".join(back.get(ch, ch) for ch in out) == "Paris is cool"
    assert all(ch.isascii() or unicodedata.name(ch).startswith("CYRILLIC") for ch in out)
    assert corrupt_homoglyph("123 !?", random.Random(3)) == "123 !?"  # nothing to swap
    assert len(set(HOMOGLYPHS.values())) == len(HOMOGLYPHS)


def test_cp1252_mojibake_differs_from_latin1_and_falls_back_on_ascii() -> None:
    rng = random.Random(0)
    cp = corrupt_string("mojibake", "21 °C — café", rng, {"encoding": "cp1252"})
    latin = corrupt_string("mojibake", "21 °C — café", rng, {"encoding": "latin-1"})
    assert cp == "21 Â°C â€” cafÃ©" and cp != latin
    ascii_text = "plain ascii answer"
    assert corrupt_string("mojibake", ascii_text, rng, {"encoding": "cp1252"}) == ascii_text
    fallback = corrupt_string("mojibake", ascii_text, rng, {"encoding": "cp1252", "ascii_fallback": True,
                                                             "fallback_mode": "replacement", "fraction": 0.1})
    assert fallback.count(REPLACEMENT_CHAR) == 1
    with pytest.raises(FaultNotApplicable):
        corrupt_string("mojibake", ascii_text, rng, {"ascii_fallback": True, "fallback_mode": "mojibake"})
    with pytest.raises(FaultNotApplicable, match="rot13"):
        corrupt_string("rot13", ascii_text, rng, {})
    assert set(CORRUPTION_MODES) == {"mojibake", "symbols", "replacement", "zero_width", "homoglyph"}


def test_argument_corrupter_keeps_the_agentchaos_default_and_accepts_a_mode() -> None:
    default = argument_corrupter(get_fault("tool_corrupt_single"), random.Random(4))("Paris, France")
    assert any(0x2600 <= ord(ch) <= 0x26FF for ch in default)
    homo = argument_corrupter(get_fault("v_tool_corrupt_homoglyph"), random.Random(4))("Paris, France")
    assert homo != "Paris, France" and all(ord(ch) < 0x2600 for ch in homo)
    bad = get_fault("v_tool_corrupt_homoglyph").variant("bad", params={"mode": "rot13"})
    with pytest.raises(FaultNotApplicable):
        argument_corrupter(bad, random.Random(0))


@pytest.mark.parametrize("mode", CORRUPTION_MODES)
def test_stream_faulter_accepts_every_corruption_mode(mode: str) -> None:
    spec = get_fault("stream_corrupt").variant(f"stream_corrupt_{mode}", params={"mode": mode})
    StreamFaulter(spec, random.Random(0))
    with pytest.raises(ValueError, match="unknown corruption mode"):
        StreamFaulter(spec.variant("bad", params={"mode": "rot13"}), random.Random(0))


# --- custom HTTP bodies -----------------------------------------------------------------------
def test_sniffed_content_types() -> None:
    assert sniff_content_type("<!DOCTYPE html><html></html>") == "text/html"
    assert sniff_content_type("  <html>") == "text/html"
    assert sniff_content_type('{"message": "x"}') == "application/json"
    assert sniff_content_type("Internal Server Error") == "text/plain; charset=utf-8"


def test_custom_body_carries_only_what_its_origin_sends() -> None:
    envoy = error_response(get_fault("v_http_503_envoy_overflow"), "openai", rng=random.Random(0))
    assert envoy is not None and envoy.status == 503
    assert envoy.headers == {"content-type": "text/plain; charset=utf-8", "server": "envoy"}
    gateway = error_response(get_fault("v_http_502_apigw_json"), "openai")
    assert gateway is not None and gateway.headers == {"content-type": "application/json"}
    quota = get_fault("v_http_429_insufficient_quota")
    for provider, header in (("openai", "x-request-id"), ("anthropic", "request-id")):
        err = error_response(quota, provider, rng=random.Random(0))
        assert err is not None and header in err.headers and "retry-after" not in err.headers
        assert json.loads(err.body)["error"]["type"] == "insufficient_quota"
    timed = quota.variant("q", params={"retry_after": 2.5, "content_type": "application/problem+json"})
    err = error_response(timed, "openai")
    assert err is not None and err.headers["retry-after"] == "2.5"
    overloaded = error_response(get_fault("v_http_529_overloaded"), "openai")
    assert overloaded is not None and overloaded.headers["retry-after"] == "1"
    plain = error_response(get_fault("http_500"), "openai")
    assert plain is not None and "retry-after" not in plain.headers
    assert err.headers["content-type"] == "application/problem+json" and "x-request-id" not in err.headers


# --- through the real SDK and injecting transport ----------------------------------------------
def _sdk_call(base_url: str, provider: Any, name: str) -> Any:
    spec = get_fault(name)
    kind = "TOOL" if spec.target == "tool_calls" else "TEXT"
    plan = resolve_plan(name).with_overrides(delay_scale=0.01)
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        with episode(f"held-out-{name}", plan=plan, seed=1, tracer_provider=provider):
            request = {"model": "sim-core-test", "messages": [{"role": "user", "content": f"{kind} q 1"}],
                       "tools": [WEATHER_TOOL]}
            try:
                if spec.target == "stream":
                    return list(client.chat.completions.create(**request, stream=True))
                return client.chat.completions.create(**request)
            except openai.APIError as exc:
                return exc


def test_every_variant_fires_and_changes_what_the_sdk_returns(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    for name in VARIANTS:
        exporter.clear()
        spec = get_fault(name)
        result = _sdk_call(mode_server.base_url, provider, name)
        (span,) = [s for s in exporter.get_finished_spans()
                   if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT]
        assert span.attributes[A.FAULT_INJECTED] is True, name
        assert span.attributes[A.FAULT_EXPERIMENT] == name and span.attributes[A.FAULT_TYPE] == spec.fault_type
        assert span.attributes[A.FAULT_CHANGED] is True, name
        if spec.op == C.OP_HTTP_ERROR:
            assert isinstance(result, openai.APIStatusError) and result.status_code == spec.params["status"]
        elif spec.op == C.OP_RAISE:
            expected = openai.APITimeoutError if spec.fault_type == "timeout" else openai.APIConnectionError
            assert isinstance(result, expected), name
        else:
            assert not isinstance(result, openai.APIError), (name, result)
