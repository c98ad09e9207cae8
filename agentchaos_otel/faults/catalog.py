"""The fault catalog: every named fault configuration and its ground-truth label.

The first 65 entries reproduce AgentChaos's experiment list name for name and in its order
(6 types x 2 targets x 4 strategies, 8 compound scenarios, 9 positional experiments), so a
campaign run here can be compared cell by cell with published AgentChaos numbers. The entries
after them (real HTTP faults, streaming faults, latency) go beyond AgentChaos and are kept in a
separate part of the mapping so ``agentchaos_names()`` never drifts.

A ``FaultSpec`` is pure data: *what* to do (``op`` + ``params``, interpreted by
``llm_response``, ``anthropic``, ``http`` and ``stream``) and *when* it may fire (strategy,
probability, max_fires, on_call), which the plan scheduler reads. Variants (other ratios, other
wordings, other statuses) are new specs built with ``FaultSpec.variant``. The held-out set of
``variants.py`` (family ``variant``, names ``v_*``) is registered after those 80 entries, so
``get_fault`` and plans know it, while ``fault_names()`` without a family leaves it out.

Strategies
    ``single``        fires once among eligible calls (max_fires=1). Default for the compound
                      scenarios and every section-3.2 entry.
    ``persistent``    fires on every eligible call.
    ``intermittent``  each eligible call with probability 0.3 (seeded by the scheduler).
    ``burst``         the first 3 eligible calls.
    ``positional``    exactly the Nth intercepted call (``on_call``), field guard ignored.

Label vocabulary (``agentchaos.fault.type``; what diagnosers predict)
    AgentChaos types: error, timeout, empty, truncate, corrupt, schema (both targets).
    Compound: error (api_degradation, proxy_html), content_filter, truncate (max_tokens),
    stale (stale_cache), wrong_value (stale_data, wrong_entity), latency (slow_response).
    Real HTTP: http_error (5xx), rate_limit (429), connection (connect error, remote protocol
    error), timeout (read timeout: the agent experiences the same thing as an in-body timeout;
    ``target="http"`` still tells the two apart), latency (added delay).
    Streams: labels follow what the agent can observe. ``stream_cut`` when the stream ends with
    no finish_reason (cut with or without ``[DONE]``, empty stream); ``truncate`` when it ends
    with finish_reason ``length``; ``corrupt`` for corrupted deltas; ``empty`` when tool-call
    deltas are dropped (the tool_empty phenomenon); ``latency`` for a stall.
    Tool results (docs/design.md 3.3) keep their own kind names.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentchaos_otel.faults.spec import (  # noqa: F401 - re-exported: the catalog is where callers look
    AGENTCHAOS_TYPES,
    API_ERROR_TEXT,
    CONNECTION,
    CONTENT_FILTER,
    CONTENT_FILTERED_TEXT,
    CORRUPT,
    EMPTY,
    ERROR,
    FAMILIES,
    HTTP_ERROR,
    HTTP_OPS,
    LATENCY,
    LOOP_GUARD_CALLS,
    OP_CORRUPT_ARGUMENTS,
    OP_CORRUPT_CONTENT,
    OP_DELAY,
    OP_DROP_TOOL_CALLS,
    OP_HTTP_ERROR,
    OP_RAISE,
    OP_REPLAY_PREVIOUS,
    OP_SET_ARGUMENTS,
    OP_SET_CONTENT,
    OP_STREAM_CORRUPT,
    OP_STREAM_CUT,
    OP_STREAM_DROP_TOOL_CALLS,
    OP_STREAM_EMPTY,
    OP_STREAM_STALL,
    OP_STREAM_TRUNCATE,
    OP_TRUNCATE_ARGUMENTS,
    OP_TRUNCATE_CONTENT,
    PROXY_HTML_TEXT,
    RATE_LIMIT,
    RESPONSE_FAULT_TYPES,
    RESPONSE_OPS,
    SCHEMA,
    SCHEMA_ARGUMENTS,
    SCHEMA_CONTENT_TEXT,
    SERVICE_UNAVAILABLE_TEXT,
    STALE,
    STALE_DATA_ARGUMENTS,
    STRATEGIES,
    STREAM_CUT,
    STREAM_OPS,
    TARGETS,
    TIMEOUT,
    TIMEOUT_DROPPED_TEXT,
    TIMEOUT_TEXT,
    TOOL_RESULT_FAULT_TYPES,
    TRUNCATE,
    VARIANT_FAMILY,
    WRONG_ENTITY_ARGUMENTS,
    WRONG_VALUE,
    FaultSpec,
    UnknownFaultError,
)
from agentchaos_otel.faults.variants import build_variants

# --- strategy parameters (AgentChaos STRATEGIES) ----------------------------------------------
_STRATEGY_FIRING: dict[str, tuple[float, int | None]] = {
    "single": (1.0, 1),
    "persistent": (1.0, None),
    "intermittent": (0.3, None),
    "burst": (1.0, 3),
}
_MATRIX_STRATEGIES = ("single", "persistent", "intermittent", "burst")


@dataclass(frozen=True)
class _Base:
    type: str
    op: str
    params: Mapping[str, Any]
    description: str


_LLM_BASES: tuple[_Base, ...] = (
    _Base(ERROR, OP_SET_CONTENT, {"text": API_ERROR_TEXT},
          "content replaced by an HTTP 500 error message, status stays 200"),
    _Base(TIMEOUT, OP_SET_CONTENT, {"text": TIMEOUT_TEXT},
          "content replaced by a timeout message, status stays 200"),
    _Base(EMPTY, OP_SET_CONTENT, {"text": ""},
          "content replaced by an empty string"),
    _Base(TRUNCATE, OP_TRUNCATE_CONTENT, {"ratio": 0.3, "finish_reason": "length"},
          "content cut to 30% of its length, finish_reason=length"),
    _Base(CORRUPT, OP_CORRUPT_CONTENT, {"mode": "mojibake", "encoding": "latin-1"},
          "content re-read as mojibake (UTF-8 bytes decoded as Latin-1)"),
    _Base(SCHEMA, OP_SET_CONTENT, {"text": SCHEMA_CONTENT_TEXT},
          "content replaced by a JSON error object instead of prose"),
)

_TOOL_BASES: tuple[_Base, ...] = (
    _Base(ERROR, OP_SET_ARGUMENTS, {"arguments": "{}"},
          "first tool call's arguments replaced by {} (required parameters missing)"),
    _Base(TIMEOUT, OP_DROP_TOOL_CALLS, {"text": TIMEOUT_DROPPED_TEXT},
          "tool calls dropped, content replaced by a connection-dropped message"),
    _Base(EMPTY, OP_DROP_TOOL_CALLS, {},
          "tool calls stripped (tool_calls := [])"),
    _Base(TRUNCATE, OP_TRUNCATE_ARGUMENTS, {"ratio": 0.3},
          "every string value of the first tool call's arguments cut to 30% (valid JSON)"),
    _Base(CORRUPT, OP_CORRUPT_ARGUMENTS, {"fraction": 0.2, "low": 0x2600, "high": 0x26FF},
          "~20% of characters of every argument string replaced by U+2600-U+26FF symbols (valid JSON)"),
    _Base(SCHEMA, OP_SET_ARGUMENTS, {"arguments": SCHEMA_ARGUMENTS},
          "first tool call's arguments replaced by an unexpected parameter name"),
)


def _matrix() -> list[FaultSpec]:
    out = []
    for prefix, target, bases in (("llm", "content", _LLM_BASES), ("tool", "tool_calls", _TOOL_BASES)):
        for base in bases:
            for strategy in _MATRIX_STRATEGIES:
                probability, max_fires = _STRATEGY_FIRING[strategy]
                out.append(FaultSpec(
                    name=f"{prefix}_{base.type}_{strategy}", fault_type=base.type, target=target,
                    op=base.op, strategy=strategy, family="agentchaos",
                    description=f"{base.description} [{strategy}]", guard=True,
                    probability=probability, max_fires=max_fires, params=dict(base.params)))
    return out


def _compound() -> list[FaultSpec]:
    def one(name: str, fault_type: str, target: str, op: str, description: str, *, guard: bool = True,
            on_call: int | None = None, delay_s: float = 0.0, **params: Any) -> FaultSpec:
        return FaultSpec(name=name, fault_type=fault_type, target=target, op=op, strategy="single",
                         family="compound", description=description, guard=guard, max_fires=1,
                         on_call=on_call, delay_s=delay_s, params=params)

    return [
        one("compound_api_degradation", ERROR, "content", OP_SET_CONTENT,
            "3 s latency spike, then content replaced by an HTTP 503 service-unavailable message",
            delay_s=3.0, text=SERVICE_UNAVAILABLE_TEXT),
        # AgentChaos strips tool calls and sets the content in the same firing, so whichever field
        # the response has, it is blocked: no guard.
        one("compound_content_filter", CONTENT_FILTER, "content", OP_DROP_TOOL_CALLS,
            "safety filter: tool calls stripped, content replaced, finish_reason=content_filter",
            guard=False, text=CONTENT_FILTERED_TEXT, finish_reason="content_filter"),
        one("compound_max_tokens", TRUNCATE, "content", OP_TRUNCATE_CONTENT,
            "max_tokens reached: content cut to 50%, finish_reason=length",
            ratio=0.5, finish_reason="length"),
        one("compound_proxy_html", ERROR, "content", OP_SET_CONTENT,
            "content replaced by an nginx 502 Bad Gateway HTML page (proxy leak)",
            text=PROXY_HTML_TEXT),
        one("compound_stale_cache", STALE, "content", OP_REPLAY_PREVIOUS,
            "a stale cache replays the previous response on the 2nd call",
            guard=False, on_call=2),
        one("compound_stale_data", WRONG_VALUE, "tool_calls", OP_SET_ARGUMENTS,
            "first tool call's arguments replaced by a stale location (valid, plausible, wrong)",
            arguments=STALE_DATA_ARGUMENTS),
        one("compound_wrong_entity", WRONG_VALUE, "tool_calls", OP_SET_ARGUMENTS,
            "first tool call's arguments replaced by an ambiguous entity (valid, plausible, wrong)",
            arguments=WRONG_ENTITY_ARGUMENTS),
        # Decided before the request is sent (target http): a delay, then the real response.
        one("compound_slow_response", LATENCY, "http", OP_DELAY,
            "5 s response delay; the response itself is unchanged",
            guard=False, delay_s=5.0),
    ]


_POSITIONS = (("early", 1), ("mid", 2), ("late", 3))


def _positional() -> list[FaultSpec]:
    bases = {b.type: b for b in _LLM_BASES}
    out = []
    for fault_type in (ERROR, TIMEOUT, SCHEMA):
        base = bases[fault_type]
        for position, call in _POSITIONS:
            out.append(FaultSpec(
                name=f"llm_{fault_type}_pos_{position}", fault_type=fault_type, target="content",
                op=base.op, strategy="positional", family="positional",
                description=f"{base.description} [intercepted call {call}, guard ignored]",
                guard=False, max_fires=1, on_call=call, params=dict(base.params)))
    return out


def _http() -> list[FaultSpec]:
    def one(name: str, fault_type: str, op: str, description: str, *, delay_s: float = 0.0,
            **params: Any) -> FaultSpec:
        return FaultSpec(name=name, fault_type=fault_type, target="http", op=op, strategy="single",
                         family="http", description=description, guard=False, max_fires=1,
                         delay_s=delay_s, params=params)

    return [
        one("http_429", RATE_LIMIT, OP_HTTP_ERROR,
            "HTTP 429 with Retry-After and rate-limit headers, provider error JSON", status=429,
            retry_after=1),
        one("http_500", HTTP_ERROR, OP_HTTP_ERROR, "HTTP 500 with the provider's error JSON", status=500),
        one("http_502", HTTP_ERROR, OP_HTTP_ERROR, "HTTP 502 Bad Gateway as a proxy HTML page", status=502),
        one("http_503", HTTP_ERROR, OP_HTTP_ERROR, "HTTP 503 (overloaded) with the provider's error JSON",
            status=503),
        one("http_connect_error", CONNECTION, OP_RAISE, "connection refused before any response",
            exception="ConnectError", message="[Errno 111] Connection refused"),
        one("http_read_timeout", TIMEOUT, OP_RAISE, "read timeout: the server never answers",
            exception="ReadTimeout", message="The read operation timed out"),
        one("http_remote_protocol_error", CONNECTION, OP_RAISE,
            "server closes the connection without a response",
            exception="RemoteProtocolError", message="Server disconnected without sending a response."),
        one("latency_2s", LATENCY, OP_DELAY, "2 s added before the request is sent; response unchanged",
            delay_s=2.0),
    ]


def _stream() -> list[FaultSpec]:
    def one(name: str, fault_type: str, op: str, description: str, **params: Any) -> FaultSpec:
        return FaultSpec(name=name, fault_type=fault_type, target="stream", op=op, strategy="single",
                         family="stream", description=description, guard=False, max_fires=1,
                         params=params)

    return [
        one("stream_cut", STREAM_CUT, OP_STREAM_CUT,
            "stream ends after 3 payload chunks with [DONE] but no finish_reason", after_chunks=3, done=True),
        one("stream_cut_no_done", STREAM_CUT, OP_STREAM_CUT,
            "stream ends after 3 payload chunks without finish_reason or [DONE]", after_chunks=3, done=False),
        one("stream_truncate", TRUNCATE, OP_STREAM_TRUNCATE,
            "content stops after 3 payload chunks, finish_reason=length, then [DONE]", after_chunks=3),
        one("stream_corrupt", CORRUPT, OP_STREAM_CORRUPT,
            "~20% of characters of every content delta replaced by U+2600-U+26FF symbols",
            mode="symbols", fraction=0.2),
        one("stream_drop_tool_calls", EMPTY, OP_STREAM_DROP_TOOL_CALLS,
            "tool-call deltas removed, finish_reason tool_calls becomes stop"),
        one("stream_empty", STREAM_CUT, OP_STREAM_EMPTY, "no chunks at all, only data: [DONE]", done=True),
        one("stream_stall", LATENCY, OP_STREAM_STALL, "5 s stall before the 2nd payload chunk",
            before_chunk=2, seconds=5.0),
    ]


def _variants() -> list[FaultSpec]:
    specs = build_variants()
    for spec in specs:
        assert spec.family == VARIANT_FAMILY and spec.name.startswith("v_"), spec.name
    return specs


def _build() -> dict[str, FaultSpec]:
    specs = _matrix() + _compound() + _positional()
    assert len(specs) == 65, len(specs)
    specs += _http() + _stream()
    assert len(specs) == 80, len(specs)
    specs += _variants()  # always last, so the first 80 keep their order
    catalog: dict[str, FaultSpec] = {}
    for spec in specs:
        assert spec.name not in catalog, spec.name
        catalog[spec.name] = spec
    return catalog


CATALOG: Mapping[str, FaultSpec] = _build()
_AGENTCHAOS_NAMES: tuple[str, ...] = tuple(list(CATALOG)[:65])


def agentchaos_names() -> list[str]:
    """The 65 AgentChaos configurations, in AgentChaos's own order."""
    return list(_AGENTCHAOS_NAMES)


def fault_names(family: str | None = None) -> list[str]:
    """Names of one family, in catalog order; without a family, every fault except the held-out set.

    The held-out variants (family ``"variant"``) exist to measure diagnosers on faults their rules
    were not written against; a loop over "all faults" that fed them into development or training
    data would spoil that, so they are only returned when asked for by family.
    """
    if family is None:
        return [n for n, s in CATALOG.items() if s.family != VARIANT_FAMILY]
    return [n for n, s in CATALOG.items() if s.family == family]


def get_fault(name: str) -> FaultSpec:
    try:
        return CATALOG[name]
    except KeyError:
        pass
    close = difflib.get_close_matches(name, list(CATALOG), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownFaultError(f"unknown fault {name!r}{hint} (`agentchaos faults list` shows all "
                            f"{len(CATALOG)})") from None


def fault_types() -> list[str]:
    """Every label a fault can carry, response faults first, then tool-result kinds not yet listed."""
    out = list(RESPONSE_FAULT_TYPES)
    out += [t for t in TOOL_RESULT_FAULT_TYPES if t not in out]
    return out
