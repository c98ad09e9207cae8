"""What the agent observed at each step, normalised from whichever instrumentation wrote the trace.

Our transport records content-free signals (``agentchaos.response.*``, ``agentchaos.tool.*``).
Traces from other GenAI or OpenInference instrumentations carry only standard attributes and,
when content capture was on, the messages themselves; for those the same signals are derived
here from the captured content, so every diagnoser reads one shape. Only attributes the agent
could observe are read: nothing under the ground-truth prefixes.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import signals
from agentchaos_otel.store.model import EpisodeTrace, StepRecord
from agentchaos_otel.trace import messages as genai_messages

CONNECTION_ERRORS = frozenset({
    "ConnectError", "RemoteProtocolError", "ReadError", "WriteError", "NetworkError", "ProtocolError",
    "LocalProtocolError", "APIConnectionError", "ConnectionError", "ConnectionResetError",
    "ConnectionRefusedError", "ProxyError", "UnsupportedProtocol",
})
TIMEOUT_ERRORS = frozenset({
    "ReadTimeout", "ConnectTimeout", "WriteTimeout", "PoolTimeout", "TimeoutException", "APITimeoutError",
    "TimeoutError", "Timeout",
})


@dataclass
class Observation:
    """One step as the agent saw it. ``None`` means the trace does not say."""

    index: int  # position in the episode's step list
    step: int
    span_id: str
    kind: str  # "llm" | "tool"
    name: str
    duration_ms: float
    status_error: bool = False
    error_type: str | None = None
    http_status: int | None = None
    # LLM response
    finish_reasons: tuple[str, ...] = ()
    content_length: int | None = None
    content_blank: bool = False  # whitespace only
    markers: tuple[str, ...] = ()
    unicode_anomaly: float = 0.0
    mojibake: float = 0.0
    content_is_json: bool = False
    tool_call_count: int | None = None
    tool_names: tuple[str, ...] = ()
    args_valid: bool | None = None
    args_schema_valid: bool | None = None
    args_empty: int = 0
    args_problem: str = ""
    args_anomaly: float = 0.0
    args_digest: str | None = None
    args_strings: int | None = None  # string argument values of 3+ characters
    args_ungrounded: int | None = None  # ... of which the request's messages never mention
    response_id: str | None = None
    response_digest: str | None = None
    request_digest: str | None = None
    output_tokens: int | None = None
    stream: bool = False
    replacement_chars: int = 0
    json_embedded: bool = False
    response_format: str | None = None
    asks_json: bool = False
    body_error: bool = False
    choice_count: int | None = None
    message_null: bool = False
    refusal: bool = False
    error_code: str | None = None
    max_tokens: int | None = None
    stream_done: bool | None = None
    max_chunk_gap_ms: float | None = None
    # Tool result
    tool_name: str | None = None
    result_length: int | None = None
    result_is_json: bool | None = None
    result_json_like: bool = False
    result_empty: bool = False
    result_is_error: bool = False
    result_failure: str = ""
    exception_failure: str = ""  # what a raised exception's message is about (rate_limit, timeout, ...)
    result_markers: tuple[str, ...] = ()
    result_keys: tuple[str, ...] | None = None
    result_shape: str | None = None
    result_key_count: int | None = None
    result_item_count: int | None = None
    result_numeric_strings: int | None = None
    result_digest: str | None = None
    tool_args_digest: str | None = None
    echo_mismatch: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def result_null(self) -> bool:
        """A JSON ``null`` result: the way a function with no return value answers."""
        return self.result_empty and bool(self.result_is_json) and self.result_length == 4

    @property
    def has_response(self) -> bool:
        """An LLM step that returned a body the agent read (not a transport failure)."""
        return self.kind == "llm" and not self.transport_failed

    @property
    def transport_failed(self) -> bool:
        return (self.http_status is not None and self.http_status >= 400) or (
            self.status_error and self.error_type is not None and self.content_length in (None, 0)
            and not self.tool_call_count)


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v)
    return None


def _float(v: Any, default: float = 0.0) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else default


def _strs(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        if not v.startswith("["):  # a plain value; stores that keep lists as JSON text start with [
            return (v,) if v else ()
        try:
            parsed = json.loads(v)
        except ValueError:
            return (v,)
        return _strs(parsed) if isinstance(parsed, list) else (v,)
    if isinstance(v, list | tuple):
        return tuple(str(x) for x in v)
    return (str(v),)


def _json(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return None
    return v


def _output_message(attrs: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]], list[str]] | None:
    """(text, tool calls, finish reasons) from captured output content, GenAI or OpenInference."""
    captured = genai_messages.read_output(attrs.get(A.GEN_AI_OUTPUT_MESSAGES))  # conventions' or wire format
    if captured is not None:
        return captured
    prefix = A.OI_LLM_OUTPUT_MESSAGES_PREFIX
    oi = {k[len(prefix):]: v for k, v in attrs.items() if k.startswith(prefix)}
    if oi:
        text = oi.get("0.message.content")
        calls: list[dict[str, Any]] = []
        for i in range(16):
            name = oi.get(f"0.message.tool_calls.{i}.tool_call.function.name")
            if name is None:
                break
            calls.append({"function": {"name": name, "arguments": oi.get(
                f"0.message.tool_calls.{i}.tool_call.function.arguments", "")}})
        return (text if isinstance(text, str) else None), calls, []
    body = _json(attrs.get(A.OI_OUTPUT_VALUE))
    if isinstance(body, dict) and isinstance(body.get("choices"), list) and body["choices"]:
        ch = body["choices"][0] if isinstance(body["choices"][0], dict) else {}
        msg = ch.get("message") or {}
        text = msg.get("content")
        calls = [c for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
        fr = [str(ch["finish_reason"])] if ch.get("finish_reason") else []
        return (text if isinstance(text, str) else None), calls, fr
    return None


def _body_finish_reasons(attrs: dict[str, Any]) -> list[str]:
    """Finish reasons from a raw response body recorded as OpenInference ``output.value``."""
    body = _json(attrs.get(A.OI_OUTPUT_VALUE))
    if isinstance(body, dict) and isinstance(body.get("choices"), list):
        return [str(c["finish_reason"]) for c in body["choices"]
                if isinstance(c, dict) and c.get("finish_reason")]
    return []


def _derive_llm(attrs: dict[str, Any]) -> dict[str, Any]:
    """Our signal attributes, computed from captured content when the trace lacks them."""
    if A.RESPONSE_CONTENT_LENGTH in attrs or A.RESPONSE_TOOL_CALL_COUNT in attrs:
        return attrs
    out = _output_message(attrs)
    if out is None:
        return attrs
    text, calls, fr = out
    fr = fr or _body_finish_reasons(attrs)
    derived = dict(attrs)
    derived.update(signals.content_signals(text))
    derived.update(signals.tool_call_signals(calls, None))
    derived.setdefault(A.RESPONSE_DIGEST, signals.canonical_json_digest(
        {"text": text or "", "tools": [[(c.get("function") or {}).get("name"),
                                        (c.get("function") or {}).get("arguments")] for c in calls]}))
    if fr and not attrs.get(A.GEN_AI_RESPONSE_FINISH_REASONS):
        derived[A.GEN_AI_RESPONSE_FINISH_REASONS] = fr
    inputs = genai_messages.read_input(attrs.get(A.GEN_AI_INPUT_MESSAGES))
    if inputs is not None and A.RESPONSE_TOOL_ARGS_UNGROUNDED not in attrs:
        derived.update(signals.argument_grounding(calls, inputs))
    return derived


def _derive_tool(attrs: dict[str, Any]) -> dict[str, Any]:
    if A.TOOL_RESULT_LENGTH in attrs or A.TOOL_RESULT_IS_JSON in attrs:
        return attrs
    result = attrs.get(A.GEN_AI_TOOL_CALL_RESULT, attrs.get(A.OI_OUTPUT_VALUE))
    if result is None:
        return attrs
    derived = dict(attrs)
    derived.update(signals.tool_result_signals(result))
    args = attrs.get(A.GEN_AI_TOOL_CALL_ARGUMENTS, attrs.get(A.OI_INPUT_VALUE))
    if args is not None and A.TOOL_RESULT_ECHO_MISMATCH not in attrs:
        derived[A.TOOL_RESULT_ECHO_MISMATCH] = signals.echo_mismatches(args, result)
    return derived


def _exception_meaning(s: StepRecord) -> str:
    """What the exception recorded on a failed step says it was about (its message's words)."""
    if s.status_code != "ERROR":
        return ""
    for e in s.events:
        if e.get("name") == "exception":
            attrs = e.get("attributes") or {}
            text = f"{attrs.get('exception.type', '')}: {attrs.get('exception.message', '')}"
            return signals.failure_meaning(text[:2000])
    return ""


def observe_step(s: StepRecord, index: int) -> Observation:
    attrs = s.attributes
    base = dict(index=index, step=s.step, span_id=s.span_id, kind=s.kind, name=s.name,
                duration_ms=s.duration_ms, status_error=s.status_code == "ERROR",
                error_type=s.error_type or attrs.get(A.ERROR_TYPE),
                http_status=_int(attrs.get(A.RESPONSE_STATUS_CODE, attrs.get(A.HTTP_RESPONSE_STATUS_CODE))))
    if s.kind == "tool":
        a = _derive_tool(attrs)
        keys = a.get(A.TOOL_RESULT_KEYS)
        return Observation(
            **base, tool_name=a.get(A.GEN_AI_TOOL_NAME) or a.get(A.OI_TOOL_NAME) or s.name.split(" ")[-1],
            result_length=_int(a.get(A.TOOL_RESULT_LENGTH)),
            result_is_json=a.get(A.TOOL_RESULT_IS_JSON),
            result_json_like=bool(a.get(A.TOOL_RESULT_JSON_LIKE, False)),
            result_empty=bool(a.get(A.TOOL_RESULT_EMPTY, False)),
            result_is_error=bool(a.get(A.TOOL_RESULT_IS_ERROR, False)),
            result_failure=str(a.get(A.TOOL_RESULT_FAILURE) or ""),
            exception_failure=_exception_meaning(s),
            result_markers=(_strs(a.get(A.TOOL_RESULT_ERROR_MARKERS))
                            or _strs(a.get(A.TOOL_RESULT_ERROR_MARKER))),
            result_keys=_strs(keys) if keys is not None else None,
            result_shape=a.get(A.TOOL_RESULT_SHAPE_DIGEST),
            result_key_count=_int(a.get(A.TOOL_RESULT_KEY_COUNT)),
            result_item_count=_int(a.get(A.TOOL_RESULT_ITEM_COUNT)),
            result_numeric_strings=_int(a.get(A.TOOL_RESULT_NUMERIC_STRINGS)),
            result_digest=a.get(A.TOOL_RESULT_DIGEST),
            tool_args_digest=a.get(A.TOOL_ARGS_DIGEST),
            echo_mismatch=_strs(a.get(A.TOOL_RESULT_ECHO_MISMATCH)),
        )
    a = _derive_llm(attrs)
    fr = _strs(a.get(A.GEN_AI_RESPONSE_FINISH_REASONS)) or _strs(a.get(A.OI_LLM_FINISH_REASON))
    out_tokens = _int(a.get(A.GEN_AI_USAGE_OUTPUT_TOKENS, a.get(A.OI_LLM_TOKEN_COUNT_COMPLETION)))
    done = a.get(A.RESPONSE_STREAM_DONE)
    gap = a.get(A.RESPONSE_MAX_CHUNK_GAP_MS)
    return Observation(
        **base, finish_reasons=tuple(f.lower() for f in fr),
        content_length=_int(a.get(A.RESPONSE_CONTENT_LENGTH)),
        content_blank=bool(a.get(A.RESPONSE_CONTENT_BLANK, False)),
        markers=_strs(a.get(A.RESPONSE_ERROR_MARKERS)) or _strs(a.get(A.RESPONSE_ERROR_MARKER)),
        unicode_anomaly=_float(a.get(A.RESPONSE_UNICODE_ANOMALY)),
        mojibake=_float(a.get(A.RESPONSE_MOJIBAKE)),
        content_is_json=bool(a.get(A.RESPONSE_IS_JSON, False)),
        tool_call_count=_int(a.get(A.RESPONSE_TOOL_CALL_COUNT)),
        tool_names=_strs(a.get(A.RESPONSE_TOOL_NAMES)),
        args_valid=a.get(A.RESPONSE_TOOL_ARGS_VALID),
        args_schema_valid=a.get(A.RESPONSE_TOOL_ARGS_SCHEMA_VALID),
        args_empty=_int(a.get(A.RESPONSE_TOOL_ARGS_EMPTY)) or 0,
        args_problem=str(a.get(A.RESPONSE_TOOL_ARGS_PROBLEM) or ""),
        args_anomaly=_float(a.get(A.RESPONSE_TOOL_ARGS_ANOMALY)),
        args_digest=a.get(A.RESPONSE_TOOL_ARGS_DIGEST),
        args_strings=_int(a.get(A.RESPONSE_TOOL_ARGS_STRINGS)),
        args_ungrounded=_int(a.get(A.RESPONSE_TOOL_ARGS_UNGROUNDED)),
        response_id=a.get(A.GEN_AI_RESPONSE_ID),
        response_digest=a.get(A.RESPONSE_DIGEST),
        request_digest=a.get(A.REQUEST_DIGEST),
        output_tokens=out_tokens,
        stream=bool(a.get(A.GEN_AI_REQUEST_STREAM, False)),
        replacement_chars=_int(a.get(A.RESPONSE_REPLACEMENT_CHARS)) or 0,
        json_embedded=bool(a.get(A.RESPONSE_JSON_EMBEDDED, False)),
        response_format=a.get(A.REQUEST_RESPONSE_FORMAT) if isinstance(a.get(A.REQUEST_RESPONSE_FORMAT), str) else None,
        asks_json=bool(a.get(A.REQUEST_ASKS_JSON, False)),
        body_error=bool(a.get(A.RESPONSE_BODY_ERROR, False)),
        choice_count=_int(a.get(A.RESPONSE_CHOICE_COUNT)),
        message_null=bool(a.get(A.RESPONSE_MESSAGE_NULL, False)),
        refusal=bool(a.get(A.RESPONSE_REFUSAL, False)),
        error_code=str(a[A.RESPONSE_ERROR_CODE]) if a.get(A.RESPONSE_ERROR_CODE) is not None else None,
        max_tokens=_int(a.get(A.GEN_AI_REQUEST_MAX_TOKENS)),
        stream_done=done if isinstance(done, bool) else None,
        max_chunk_gap_ms=_float(gap) if isinstance(gap, int | float) else None,
    )


_CAMEL_RE = re.compile(r"[a-z0-9][A-Z]|^[A-Z][a-z]")


_WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_VOWELS = frozenset("aeiouy")
# Vowel-free words that are ordinary in key names (protocols, formats, units).
_COMMON_CONSONANT_WORDS = frozenset({"http", "https", "html", "xhtml", "sftp", "ftps", "smtp", "ssh", "pwd",
                                     "cwd", "msg", "src", "dst", "ctx", "cfg", "xml", "csv", "pdf", "sql",
                                     "dns", "tls", "ssl", "rgb", "kph", "mph", "kwh", "nm", "cm", "mm",
                                     "km", "kg", "mb", "gb", "kb", "tb", "std", "pct", "qty", "txn", "gps", "txt",
                                     "tmp", "png", "jpg", "svg", "bmp", "gz", "tgz", "rpm", "dpi"})


def abbreviated_words(key: str) -> list[str]:
    """Words of a key written without vowels (``rslt``, ``cntnt``): a key set abbreviated on the way,
    when the rest of the episode spells its keys out."""
    out = []
    for w in (m.lower() for m in _WORD_RE.findall(key)):
        initial_vowel = w[0] in _VOWELS  # abbreviations keep a leading vowel: offset -> offst
        rest = w[1:] if initial_vowel else w
        if (len(w) >= (5 if initial_vowel else 3) and not (_VOWELS & set(rest))
                and w not in _COMMON_CONSONANT_WORDS):
            out.append(w)
    return out


def key_style(key: str) -> str:
    """Naming convention of one key: 'upper' (DATA_SOURCE), 'camel' (dataSource/DataSource), 'kebab'
    (data-source), 'abbrev' (vowel-free words: rslt_cntnt), 'snake' (data_source, city) or 'other'
    (no letters). APIs keep one convention."""
    if not any(c.isalpha() for c in key):
        return "other"
    if key.isupper():  # short acronyms (ID, URL, MA(20)) are ordinary in any convention
        return "upper" if sum(c.isalpha() for c in key) >= 4 else "other"
    if _CAMEL_RE.search(key):
        return "camel"
    if "-" in key:
        return "kebab"
    if abbreviated_words(key):
        return "abbrev"
    return "snake"


def odd_style_keys(keys: tuple[str, ...] | None, norm: Counter[str]) -> list[str]:
    """Keys written in a convention that never occurs in ``norm`` (style counts of other results)."""
    return [k for k in keys or () if (st := key_style(k)) in ("upper", "camel", "kebab", "abbrev")
            and norm[st] == 0]


@dataclass
class ToolReference:
    """What results of one tool normally look like within an episode."""

    keys: tuple[str, ...] | None
    shape: str | None
    numeric_strings: int | None
    key_count: int | None
    item_count: int | None
    json_results: int
    nonempty_results: int
    text_results: int
    from_later: bool = False  # the norm comes from calls after this one (this is the first call)
    support: int = 0  # clean calls sharing the norm's key set


class EpisodeView:
    """An episode's observations plus the comparisons rules and features need (per-tool norms,
    latency baseline, earlier responses), computed once."""

    def __init__(self, episode: EpisodeTrace):
        self.episode = episode
        self.obs = [observe_step(s, i) for i, s in enumerate(episode.steps)]
        llm = [o.duration_ms for o in self.obs if o.kind == "llm" and not o.transport_failed]
        self.llm_median_ms = statistics.median(llm) if llm else 0.0
        self._first_by_id: dict[str, int] | None = None
        self._by_tool: dict[str, list[Observation]] = {}
        for o in self.obs:
            if o.kind == "tool" and o.tool_name:
                self._by_tool.setdefault(o.tool_name, []).append(o)

    def __len__(self) -> int:
        return len(self.obs)

    @staticmethod
    def _clean(o: Observation) -> bool:
        return bool(o.result_is_json) and not o.result_is_error and not o.result_empty

    def is_clean(self, o: Observation) -> bool:
        """A JSON tool result that is neither an error nor empty: usable as a norm."""
        return self._clean(o)

    def calls_of(self, o: Observation) -> list[Observation]:
        """Every step of the episode that called o's tool, o included."""
        return self._by_tool.get(o.tool_name or "", [])

    def tool_reference(self, o: Observation) -> ToolReference | None:
        """Norm for o's tool from the *other* calls of the same tool: earlier ones first, because
        a fault that persists (a rename kept for the rest of the episode) would otherwise become
        the norm; later ones only when o is the first call."""
        calls = [c for c in self._by_tool.get(o.tool_name or "", []) if c is not o]
        if not calls:
            return None
        earlier = [c for c in calls if c.index < o.index and self._clean(c)]
        pool = earlier or [c for c in calls if self._clean(c)]
        first = None
        support = 0
        if pool:
            if earlier:
                first = earlier[0]
            else:
                common, _ = Counter(c.result_keys for c in pool).most_common(1)[0]
                first = next(c for c in pool if c.result_keys == common)
            support = sum(1 for c in pool if c.result_keys == first.result_keys)
        return ToolReference(
            keys=first.result_keys if first else None, shape=first.result_shape if first else None,
            numeric_strings=first.result_numeric_strings if first else None,
            key_count=first.result_key_count if first else None,
            item_count=first.result_item_count if first else None,
            json_results=sum(1 for c in calls if c.result_is_json),
            nonempty_results=sum(1 for c in calls if not c.result_empty),
            text_results=sum(1 for c in calls if c.result_is_json is False and not c.result_empty),
            from_later=not earlier, support=support,
        )

    def _prefix(self) -> None:
        """One pass over the clean tool results: what was seen before each step (styles, keys
        shared by all, numbers-as-strings), so per-step comparisons cost O(1) instead of O(n)."""
        self._style_before: list[Counter[str]] = []
        self._shared_before: list[set[str] | None] = []
        self._tools_before: list[int] = []
        self._num_before: list[int] = []
        self._clean_before: list[int] = []
        styles: Counter[str] = Counter()
        shared: set[str] | None = None
        tools: set[str] = set()
        num = clean = 0
        for c in self.obs:
            self._style_before.append(styles.copy())
            self._shared_before.append(None if shared is None else set(shared))
            self._tools_before.append(len(tools))
            self._num_before.append(num)
            self._clean_before.append(clean)
            if c.kind == "tool" and self._clean(c):
                num += c.result_numeric_strings or 0
                if c.result_keys:
                    clean += 1
                    styles.update(key_style(k) for k in c.result_keys)
                    shared = set(c.result_keys) if shared is None else shared & set(c.result_keys)
                    tools.add(c.tool_name or "")
        self._style_all = styles

    def style_norm(self, o: Observation) -> tuple[Counter[str], bool]:
        """Key-style counts over the episode's other clean JSON tool results (any tool): earlier
        ones when there are any, else later ones; and whether the norm came from later results."""
        if not hasattr(self, "_style_before"):
            self._prefix()
        if self._clean_before[o.index]:
            return self._style_before[o.index], False
        total = self._style_all.copy()
        if self._clean(o) and o.result_keys:
            total.subtract(key_style(k) for k in o.result_keys)
        return +total, True

    def numeric_strings_before(self, o: Observation) -> int:
        """Numbers-as-strings over earlier clean results of any tool."""
        if not hasattr(self, "_style_before"):
            self._prefix()
        return self._num_before[o.index]

    def shared_keys(self, o: Observation) -> set[str]:
        """Keys every earlier clean result carries, when those come from at least two tools (an
        envelope such as ``status``/``request_id`` that the API puts on every answer)."""
        if not hasattr(self, "_style_before"):
            self._prefix()
        shared = self._shared_before[o.index]
        if shared is None or self._clean_before[o.index] < 2 or self._tools_before[o.index] < 2:
            return set()
        return shared

    def same_call_earlier(self, o: Observation) -> Observation | None:
        """An earlier call of the same tool with identical arguments, if the trace records them."""
        if not o.tool_args_digest:
            return None
        for c in self._by_tool.get(o.tool_name or "", []):
            if c.index < o.index and c.tool_args_digest == o.tool_args_digest and self._clean(c):
                return c
        return None

    def ungrounded_steps(self) -> int:
        """LLM steps whose tool arguments carry a value the conversation never mentioned: the
        episode's norm for invented values (a model that habitually fills in values makes this large)."""
        if not hasattr(self, "_ungrounded"):
            self._ungrounded = sum(1 for c in self.obs if c.kind == "llm" and (c.args_ungrounded or 0) > 0)
        return self._ungrounded

    def previous_llm(self, o: Observation) -> Observation | None:
        for c in reversed(self.obs[:o.index]):
            if c.kind == "llm" and c.has_response:
                return c
        return None

    def response_seen_before(self, o: Observation) -> bool:
        """Whether an earlier LLM step already returned o's response id (a replayed response)."""
        if self._first_by_id is None:
            self._first_by_id = {}
            for c in self.obs:
                if c.kind == "llm" and c.response_id:
                    self._first_by_id.setdefault(c.response_id, c.index)
        return bool(o.response_id) and self._first_by_id.get(o.response_id or "", o.index) < o.index

    def next_tool_results(self, o: Observation) -> list[Observation]:
        """Tool steps that ran between o (an LLM step) and the next LLM step."""
        out = []
        for c in self.obs[o.index + 1:]:
            if c.kind == "llm":
                break
            out.append(c)
        return out
