"""Observable-derived signals: what the agent saw, reduced to content-free numbers and labels.

Diagnosis needs to know that a response was empty, looked like an error page or was mojibake
even when message content is not captured, so these are computed at span time and stored as
attributes. Nothing here returns the content itself; digests are truncated SHA-256.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import unicodedata
from collections import Counter
from re import _constants as _re_constants  # the parsed form of a pattern, for _prefilter
from re import _parser as _re_parser
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import vocabulary


def digest(data: str | bytes | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:16]


# One encoder for every canonical text: ``json.dumps`` with these options builds a new encoder per
# call (a third of its cost on a chat completion); ``encode`` keeps no state between calls.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


def canonical_json_digest(value: Any) -> str:
    return digest(canonical_json(value))


# Forms that are specific enough to count anywhere in the first 2,000 characters.
_STRONG_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("html_page", re.compile(r"<\s*(!doctype\s+html|html|head|body|title|center)\b", re.I)),
    ("http_status", re.compile(r"\bHTTP(/\d(\.\d)?)?\s*[45]\d\d\b|\b[45]\d\d\s+(bad gateway|internal server"
                               r" error|service unavailable|gateway time-?out|too many requests|bad request"
                               r"|forbidden|not found|unauthorized)\b", re.I)),
    ("provider_json", re.compile(r'^\s*\{\s*"(error|detail|message|type|code)"\s*:', re.I)),
)
# Plain words that also occur in ordinary prose: only counted near the start of the text, where
# real error messages put them, so an answer that mentions "rate limits" is not an error.
_WORD_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("rate_limit", re.compile(r"rate[\s_-]?limit|too many requests|quota exceeded|throttl|\b429\b"
                              r"|exceeded your (current )?quota|insufficient[\s_-]quota|resource[\s_-]exhausted",
                              re.I)),
    ("timeout", re.compile(r"timed?[\s_-]?out|deadline exceeded"
                           r"|connection (dropped|reset|closed|aborted|refused)"
                           r"|did not respond|no response from|\b504\b", re.I)),
    ("unavailable", re.compile(r"service unavailable|temporarily unavailable|overloaded|bad gateway"
                               r"|upstream (error|connect)|server[\s_-]?error|internal error|\b50[023]\b", re.I)),
    ("filtered", re.compile(r"content[\s_-]?(filter|policy)|has been filtered|flagged by|moderation", re.I)),
    ("bracket_tag", re.compile(r"^\s*\[[A-Z][A-Z _-]{2,}\]")),
    ("error_word", re.compile(r"^\s*(error|exception|traceback|fatal)\b[:\s]", re.I)),
)
_WORD_WINDOW = 300


def _literal_runs(items: Any) -> list[str]:
    """The runs of literal characters a parsed regex sequence matches unconditionally, in order."""
    runs, run = [], ""
    for op, arg in items:
        if op is _re_constants.LITERAL:
            run += chr(arg)
            continue
        if run:
            runs.append(run)
        run = ""
    return runs + [run] if run else runs


def _needles(items: Any) -> tuple[str, ...] | None:
    """Strings one of which every match of the parsed sequence ``items`` contains; None if unknown.

    A top-level alternation needs one needle per branch; a branch gives its longest literal run,
    else the needles of an alternation or group it must match (``(bad gateway|forbidden)``).
    """
    branches = [items]
    if len(items) == 1 and items[0][0] is _re_constants.BRANCH:
        branches = list(items[0][1][1])
    found: list[str] = []
    for branch in branches:
        runs = _literal_runs(branch)
        if runs:
            found.append(max(runs, key=len))
            continue
        inner = [_needles([(op, arg)]) if op is _re_constants.BRANCH else _needles(list(arg[3]))
                 for op, arg in branch
                 if op is _re_constants.BRANCH or (op is _re_constants.SUBPATTERN and not arg[1] and not arg[2])]
        needles = next((n for n in inner if n), None)
        if needles is None:
            return None
        found.extend(needles)
    return tuple(found)


class _Form:
    """An error form's pattern, with the needles that rule it out cheaply.

    Python's regex engine tries every alternative at every position of the text: tens of
    microseconds for a few hundred characters, on every LLM response. A substring test that rules
    the pattern out first is exact: the needles are ASCII, and the text is tested in its folded
    form (``fold``), where every character an ASCII literal can match, case ignored, is that
    literal in lower case.
    """

    __slots__ = ("label", "pattern", "needles", "ignore_case")

    def __init__(self, label: str, pattern: re.Pattern[str]) -> None:
        self.label, self.pattern = label, pattern
        self.ignore_case = bool(pattern.flags & re.IGNORECASE)
        needles = _needles(list(_re_parser.parse(pattern.pattern, pattern.flags)))
        if needles is not None and self.ignore_case:
            needles = tuple(n.lower() for n in needles)
        self.needles = needles

    def shows(self, text: str, lower: str | None) -> bool:
        """``pattern.search(text)``; ``lower``: ``fold(text)``, or None to run the pattern unfiltered."""
        if self.needles is not None and lower is not None:
            within = lower if self.ignore_case else text
            for needle in self.needles:
                if needle in within:
                    break
            else:
                return False
        return self.pattern.search(text) is not None


# The only non-ASCII characters Python's ``re`` matches to an ASCII literal when case is ignored
# (``re.fullmatch("[a-z]", ch, re.I)`` over every code point; tests/agentchaos_otel/test_signal_prefilter.py
# checks it): fold maps them to that letter, so a needle test on folded text misses no match.
_FOLD_TO_ASCII_CHARS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_FOLD_TO_ASCII = str.maketrans(_FOLD_TO_ASCII_CHARS)
_FOLDS_RE = re.compile("[" + "".join(_FOLD_TO_ASCII_CHARS) + "]")  # translate walks every character: only if needed


def fold(text: str) -> str:
    """``text`` for the needle test: lower case, with every character that matches an ASCII letter
    (case ignored) written as that letter. Other non-ASCII characters may lengthen or stay; they
    match no ASCII literal, so they only ever break a needle that would not match anyway."""
    if text.isascii() or _FOLDS_RE.search(text) is None:
        return text.lower()
    return text.translate(_FOLD_TO_ASCII).lower()


_STRONG_FORMS = tuple(_Form(label, pattern) for label, pattern in _STRONG_PATTERNS)
_WORD_FORMS = tuple(_Form(label, pattern) for label, pattern in _WORD_PATTERNS)


def error_markers(text: str | None) -> list[str]:
    """Every error-like form the text shows, in a fixed order; [] when it looks normal."""
    if not text:
        return []
    head = text[:2000]
    ascii_head = head.isascii()
    lower = fold(head)
    found = [form.label for form in _STRONG_FORMS if form.shows(head, lower)]
    if "provider_json" not in found and _error_object(text):
        found.append("provider_json")
    start = text[:_WORD_WINDOW]
    lower = lower[:_WORD_WINDOW] if ascii_head else fold(start)  # folding may change a length
    found += [form.label for form in _WORD_FORMS if form.shows(start, lower)]
    return found


_ERROR_OBJECT_KEYS = frozenset({"error", "errors", "detail", "fault"})


def _error_object(text: str) -> bool:
    """A JSON object with an error member anywhere at its top level (JSON-RPC puts ``jsonrpc``
    first, GraphQL ``data``), the shape most APIs give their error bodies."""
    stripped = text.strip()
    if not stripped.startswith("{") or len(stripped) > 20_000:
        return False
    try:
        obj = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(obj, dict) and any(obj.get(k) not in (None, "", [], {}) for k in _ERROR_OBJECT_KEYS)


def error_marker(text: str | None) -> str:
    """Classify error-like text in its common real-world forms; '' when it looks normal."""
    found = error_markers(text)
    return found[0] if found else ""


_MOJIBAKE_RE = re.compile("[\u00c2\u00c3\u00c5\u00e2][\u0080-\u00bf\u2018-\u203a\u0152\u0153\u0160"
                          "\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc\u20ac\u2122]")


def mojibake_score(text: str | None) -> float:
    """Share of characters that are part of UTF-8-read-as-Latin-1 sequences (0..1)."""
    if not text:
        return 0.0
    hits = len(_MOJIBAKE_RE.findall(text))
    return min(1.0, 2.0 * hits / max(1, len(text)))


_ASCII_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def unicode_anomaly(text: str | None) -> float:
    """Share of characters that are symbols, private use, control or replacement characters."""
    if not text:
        return 0.0
    odd = len(_ASCII_CONTROL_RE.findall(text))  # the only odd ASCII characters
    if text.isascii():  # the common case
        return odd / len(text)
    # Mostly ASCII with a few other characters (a degree sign, curly quotes, an emoji): each
    # distinct one is judged once, instead of a category lookup per character of the text.
    others = Counter(_NON_ASCII_RE.findall(text))
    odd += sum(n for ch, n in others.items() if _odd_character(ch))
    if not any(_script(ch) in ("cyrillic", "greek") for ch in others):
        return odd / len(text)  # no look-alike letters without a Cyrillic or Greek one
    return (odd + _mixed_script_letters(text)) / len(text)


_NON_ASCII_RE = re.compile("[^\x00-\x7f]")


@functools.lru_cache(maxsize=4096)
def _odd_character(ch: str) -> bool:
    """A non-ASCII character ``unicode_anomaly`` counts: a symbol, private use, unassigned,
    control, surrogate or replacement character, a dingbat, or an invisible format character
    (zero-width space ...; the joiner is kept: emoji sequences use it)."""
    cat = unicodedata.category(ch)
    if cat in ("So", "Co", "Cn", "Cc", "Cs") or ch == "\ufffd" or "\u2600" <= ch <= "\u27bf":
        return True
    return cat == "Cf" and ch != "\u200d"


_WORD_CHARS_RE = re.compile(r"[^\W\d_]+")


@functools.lru_cache(maxsize=4096)
def _script(ch: str) -> str:
    if ch.isascii():
        return "latin"
    name = unicodedata.name(ch, "")
    return name.split(" ", 1)[0].lower() if name else "other"


def _mixed_script_letters(text: str) -> int:
    """Letters of a minority script inside a word that mixes Latin with Cyrillic or Greek
    (``Оslo`` with a Cyrillic O): look-alike substitution, which no language writes."""
    odd = 0
    for word in _WORD_CHARS_RE.findall(text):
        if word.isascii() or len(word) < 2:
            continue
        scripts = [_script(c) for c in word]
        if "latin" in scripts and ("cyrillic" in scripts or "greek" in scripts):
            counts = {s: scripts.count(s) for s in set(scripts)}
            odd += sum(counts.values()) - max(counts.values())
    return odd


# What a JSON text can start with after JSON's own whitespace (Python's decoder also reads NaN and
# Infinity): any other text is not JSON, said without raising and catching a decode error.
_JSON_STARTS = frozenset('{["-0123456789tfnNI')


def may_be_json(text: str) -> bool:
    """False when ``text`` certainly is not a JSON document (``json.loads`` would raise)."""
    return text.lstrip(" \t\n\r")[:1] in _JSON_STARTS


def is_json(text: str | None) -> bool:
    if text is None or (isinstance(text, str) and not may_be_json(text)):
        return False
    try:
        json.loads(text)
    except (ValueError, TypeError):
        return False
    return True


_FENCED_RE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)


def embedded_json(text: str | None) -> bool:
    """Text that is not JSON itself but carries a JSON object or array inside a markdown fence or
    inside prose: what models answer when a request asked for bare JSON."""
    if not text or not text.strip() or is_json(text):
        return False
    for m in _FENCED_RE.finditer(text):
        if is_json(m.group(1).strip()):
            return True
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    end = max(text.rfind("}"), text.rfind("]"))
    return start >= 0 and end > start and len(text) <= 200_000 and is_json(text[start:end + 1])


def read_reply(text: str, parsed: Any = None, is_json_text: bool = False) -> vocabulary.Reading:
    """Whether a model's reply text is an error report: a JSON error object in place of an answer,
    or a text in one of the error forms at its start (``vocabulary.read_text(reply=True)``)."""
    if is_json_text:
        return vocabulary.read_value(parsed) if isinstance(parsed, dict) else vocabulary.NOTHING
    return vocabulary.read_text(text, reply=True)


def content_signals(content: str | None) -> dict[str, Any]:
    """Signals of an assistant message's text content."""
    text = content or ""
    markers = error_markers(text)
    parsed: Any = None
    is_json_text = False
    if text.strip() and may_be_json(text):
        try:
            parsed, is_json_text = json.loads(text), True
        except (ValueError, TypeError):
            pass
    out = {
        A.RESPONSE_REPLACEMENT_CHARS: text.count("\ufffd"),
        A.RESPONSE_JSON_EMBEDDED: not is_json_text and embedded_json(text),
        A.RESPONSE_CONTENT_LENGTH: len(text),
        A.RESPONSE_ERROR_MARKER: markers[0] if markers else "",
        A.RESPONSE_ERROR_MARKERS: markers,
        A.RESPONSE_UNICODE_ANOMALY: round(unicode_anomaly(text), 6),
        A.RESPONSE_MOJIBAKE: round(mojibake_score(text), 6),
        A.RESPONSE_IS_JSON: is_json_text,
        A.RESPONSE_CONTENT_BLANK: bool(text) and not text.strip(),
    }
    reading = read_reply(text, parsed, is_json_text) if text.strip() else vocabulary.NOTHING
    # Written on every reply, "" when it is not an error report: a span without it was recorded
    # before replies were read with the vocabulary, and is read from its error markers instead.
    out[A.RESPONSE_CONTENT_FAILURE] = reading.meaning if reading.found else ""
    if reading.found:
        out[A.RESPONSE_CONTENT_FAILURE_EVIDENCE] = evidence_of(reading)
    return out


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list,), "object": (dict,), "null": (type(None),),
}


def _type_ok(value: Any, declared: Any) -> bool:
    names = declared if isinstance(declared, list) else [declared]
    kinds = [_JSON_TYPES[n] for n in names if isinstance(n, str) and n in _JSON_TYPES]
    if not kinds:
        return True
    if isinstance(value, bool) and not any(bool in k for k in kinds):
        return False
    return any(isinstance(value, k) for k in kinds)


def schema_problem(args: Any, schema: dict[str, Any] | None) -> str:
    """The first way arguments break a JSON-schema object, or '' when they fit.

    Only the part of JSON Schema that tool declarations use in practice. The kinds matter for
    diagnosis: arguments none of whose names the tool declares are a call of another shape
    (``no_declared_key``); one unknown or missing name, a wrong type or an out-of-enum value is a
    call the model got wrong (``unknown_key``, ``missing_required``, ``wrong_type``, ``enum``,
    ``empty_value``).
    """
    if not isinstance(args, dict):
        return "not_object"
    if not schema:
        return ""
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    if props and args and not any(k in props for k in args):
        return "no_declared_key"  # a call of another shape altogether
    if props and any(k not in props for k in args):
        return "unknown_key"
    if any(r not in args for r in required):
        return "missing_required"
    for key, value in args.items():
        spec = props.get(key)
        if not isinstance(spec, dict):
            continue
        if "type" in spec and not _type_ok(value, spec["type"]):
            return "wrong_type"
        if isinstance(spec.get("enum"), list) and value not in spec["enum"]:
            return "enum"
        if value == "" and key in required:
            return "empty_value"
    return ""


def looks_cut(text: str | None) -> bool:
    """JSON that ends inside a string or with brackets still open, and is otherwise well formed:
    text cut part-way (a token limit, a dropped connection), not text written wrong."""
    if not text or text.lstrip()[:1] not in ("{", "["):
        return False
    stack: list[str] = []
    in_string = escape = False
    for ch in text[:200_000]:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return False
    return in_string or bool(stack)


def tool_call_signals(tool_calls: list[dict[str, Any]], request_tools: list[dict[str, Any]] | None
                      ) -> dict[str, Any]:
    """Signals of the tool calls in a response, checked against the tools declared in the request."""
    if not tool_calls:
        return {A.RESPONSE_TOOL_CALL_COUNT: 0}
    schemas: dict[str, dict[str, Any]] = {}
    for t in request_tools or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            schemas[fn["name"]] = fn.get("parameters") or {}
        elif isinstance(t, dict) and t.get("name"):  # Anthropic shape
            schemas[t["name"]] = t.get("input_schema") or {}
    names, valid, schema_valid, arg_text, empty, problem = [], True, True, [], 0, ""
    seen_text: list[str] = []  # the same texts with \u escapes written as their characters
    for call in tool_calls:
        fn = call.get("function") or {}
        name = str(fn.get("name") or "")
        raw = fn.get("arguments")
        names.append(name)
        # Characters as the tool will receive them: a dict (Anthropic's ``input``) is written out
        # unescaped, so replacement characters and symbols in its values are seen as such.
        text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
        arg_text.append(text or "")
        seen_text.append(text or "")
        try:
            parsed = json.loads(text) if text else {}
        except (ValueError, TypeError):
            valid = schema_valid = False
            problem = problem or ("cut" if looks_cut(text) else "invalid_json")
            continue
        if parsed == {}:
            empty += 1
        if "\\u" in text:  # escaped characters are what the tool receives: judge those
            seen_text[-1] = json.dumps(parsed, ensure_ascii=False, default=str)
        if name in schemas:
            found = schema_problem(parsed, schemas[name])
        else:
            found = "unknown_tool" if schemas else ""
        if found:
            schema_valid = False
            problem = problem or found
    joined = "\n".join(arg_text)
    seen = "\n".join(seen_text)
    return {
        A.RESPONSE_TOOL_CALL_COUNT: len(tool_calls),
        A.RESPONSE_TOOL_NAMES: names,
        A.RESPONSE_TOOL_ARGS_VALID: valid,
        A.RESPONSE_TOOL_ARGS_SCHEMA_VALID: schema_valid,
        A.RESPONSE_TOOL_ARGS_EMPTY: empty,
        A.RESPONSE_TOOL_ARGS_PROBLEM: problem,
        A.RESPONSE_TOOL_ARGS_DIGEST: digest(joined),
        A.RESPONSE_TOOL_ARGS_LENGTH: len(joined),
        A.RESPONSE_TOOL_ARGS_ANOMALY: round(max(unicode_anomaly(seen), mojibake_score(seen)), 6),
        A.RESPONSE_TOOL_ARGS_MOJIBAKE: round(mojibake_score(seen), 6),
    }


# --- Tool results ---------------------------------------------------------------------------------

_NUMERIC_RE = re.compile(r"^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$")
_MAX_WALK = 20_000


def _walk(value: Any, budget: list[int]) -> tuple[int, int, int]:
    """(keys, array items, numeric strings) over the whole structure, bounded for huge results."""
    keys = items = numeric = 0
    stack = [value]
    while stack and budget[0] > 0:
        budget[0] -= 1
        v = stack.pop()
        if isinstance(v, dict):
            keys += len(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            items += len(v)
            stack.extend(v)
        elif isinstance(v, str) and len(v) < 40 and _NUMERIC_RE.match(v):
            numeric += 1
    return keys, items, numeric


def record_keys(value: Any, depth: int = 0) -> list[str]:
    """Keys of the records a JSON result carries: the first object of a top-level list, of the one
    list of objects an object holds (``items``, ``results``, ``transactions``), or of one wrapped
    object (``{"d": {...}}``, ``{"invoice": {...}}``), two levels down at most. An API keeps one
    naming convention for its records too, so keys renamed inside a listing show here. Runs on
    every JSON tool result: one pass over the members, nothing copied."""
    if type(value) is list:
        return sorted(map(str, value[0]))[:64] if value and type(value[0]) is dict else []
    if type(value) is not dict or depth >= 2:
        return []
    listing = wrapped = None
    wrappers = 0
    for v in value.values():
        kind = type(v)
        if kind is list:
            if v and type(v[0]) is dict:
                if listing is not None:
                    return []  # several lists of records: not one listing
                listing = v
        elif kind is dict:
            wrappers += 1
            wrapped = v
    if listing is not None:
        return sorted(map(str, listing[0]))[:64]
    if wrappers == 1 and wrapped is not None:
        return record_keys(wrapped, depth + 1) or sorted(map(str, wrapped))[:64]
    return []


def _shape(value: Any, depth: int = 0) -> Any:
    """The structure of a value with every leaf replaced by its type name; arrays by their first item."""
    if depth > 6:
        return "..."
    if isinstance(value, dict):
        return {k: _shape(v, depth + 1) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(value[0], depth + 1)] if value else []
    return type(value).__name__


def _status_of(obj: dict[str, Any]) -> int | None:
    for key in ("status", "status_code", "code", "statusCode"):
        val = obj.get(key)
        if isinstance(val, int) and not isinstance(val, bool) and 100 <= val <= 599:
            return val
        if isinstance(val, str) and val.isdigit() and 100 <= int(val) <= 599:
            return int(val)
    return None


def evidence_of(reading: vocabulary.Reading) -> str:
    """``"<form> <row>"``: the shape a failure was recognised by and the published code it rests on."""
    return f"{reading.form} {reading.evidence}".strip()


# JSON that does not parse but opens an error member: an error body cut part-way is still an error.
_CUT_ERROR_RE = re.compile(r'"(?:error|errors|fault|exception|error_?message|errorMessage)"\s*:\s*'
                           r'(?!null|false|\[\s*\]|\{\s*\})', re.I)


# JSON opening near the start of a text that is not JSON: a body with a stray line before it
# (a chunk-size line, a log prefix) is still a JSON body, cut or not.
_JSON_OPEN_RE = re.compile(r'[{\[]\s*["{\[]')


def json_like(stripped: str) -> bool:
    """Text that is meant as JSON: it opens like JSON, or a JSON object or array opens on its
    first line (after a stray prefix). ``[Errno 104] ...`` and ``[ERROR] ...`` are not, nor is an
    Erlang or Elixir term (``{error,nxdomain}``, ``{:error, :timeout}``): a JSON object's keys
    are quoted."""
    if stripped[:1] == '"':
        return True
    if stripped[:1] == "{":
        return not stripped[1:3].lstrip(":").lstrip()[:1].isalpha()
    if stripped[:1] == "[":
        return not stripped[1:2].isalpha()
    head = stripped[:80].split("\n", 2)
    return any(_JSON_OPEN_RE.match(line.strip()) for line in head[1:2]) or bool(
        _JSON_OPEN_RE.search(head[0][:24]))


def read_result_text(text: str) -> vocabulary.Reading:
    """What a result that is not valid JSON says: a text error is read for its meaning; text that
    is meant as JSON and does not parse is an error only when it opens an error member, and
    partial when a last line says the output was cut."""
    stripped = text.lstrip()
    if json_like(stripped):
        if _CUT_ERROR_RE.search(stripped[:2000]):
            ev = vocabulary.read_text("Error: " + stripped[:4000])
            return vocabulary.Reading(True, ev.meaning or vocabulary.GENERIC, ev.evidence, "error_member")
        # JSON followed by a line saying the output above was cut ("... output truncated"): partial
        trailer = vocabulary.read_text(stripped)
        return trailer if trailer.form == "trailer" else vocabulary.NOTHING
    return vocabulary.read_text(text)


def tool_result_signals(result: Any) -> dict[str, Any]:
    """Signals of what a tool call returned to the agent, comparable across calls of one tool.

    Whether the result reports a failure (or a partial answer), and what it means, is read with
    the published error vocabulary (``agentchaos_otel.vocabulary``) over the whole result: error
    members, status objects, flags, XML faults, tracebacks, error lines. Key sets and a value-free
    shape digest let a diagnoser see lost or renamed keys against other results of the same tool
    without storing the result itself.
    """
    text = result if isinstance(result, str) else None
    parsed: Any = None
    is_json_value = False
    if text is None:
        if isinstance(result, bytes):
            text = result.decode("utf-8", "replace")
        else:
            parsed, is_json_value = result, True
            try:
                text = json.dumps(result, ensure_ascii=False, default=str)
            except (TypeError, ValueError):
                text = str(result)
                parsed, is_json_value = None, False
    if not is_json_value:
        stripped = text.strip()
        try:
            parsed, is_json_value = json.loads(stripped), bool(stripped)
        except (ValueError, TypeError):
            parsed, is_json_value = None, False
    stripped = text.strip()
    empty = stripped == "" or (is_json_value and parsed in ({}, [], None, ""))
    if is_json_value:
        reading = vocabulary.read_value(parsed)
    elif stripped:
        reading = read_result_text(stripped)
    else:
        reading = vocabulary.NOTHING
    markers = [m for m in (reading.meaning, reading.form) if m] if reading.found else []
    out: dict[str, Any] = {
        A.TOOL_RESULT_LENGTH: len(text),
        A.TOOL_RESULT_IS_JSON: is_json_value,
        A.TOOL_RESULT_JSON_LIKE: bool(stripped) and json_like(stripped),
        A.TOOL_RESULT_EMPTY: empty,
        A.TOOL_RESULT_IS_ERROR: reading.is_error,
        A.TOOL_RESULT_ERROR_MARKER: markers[0] if markers else "",
        A.TOOL_RESULT_ERROR_MARKERS: markers,
        A.TOOL_RESULT_DIGEST: digest(text),
    }
    if reading.meaning:
        out[A.TOOL_RESULT_FAILURE] = reading.meaning
        out[A.TOOL_RESULT_FAILURE_EVIDENCE] = evidence_of(reading)
    if isinstance(parsed, dict):
        status = _status_of(parsed)
        if status is not None:
            out[A.TOOL_RESULT_STATUS] = status
        if not reading.found and (counted := vocabulary.count_above_items(parsed)):
            out[A.TOOL_RESULT_COUNT_ABOVE] = counted
    if is_json_value:
        keys, items, numeric = _walk(parsed, [_MAX_WALK])
        out[A.TOOL_RESULT_KEYS] = sorted(str(k) for k in parsed)[:64] if isinstance(parsed, dict) else []
        out[A.TOOL_RESULT_RECORD_KEYS] = record_keys(parsed)
        out[A.TOOL_RESULT_KEY_COUNT] = keys
        out[A.TOOL_RESULT_ITEM_COUNT] = items
        out[A.TOOL_RESULT_NUMERIC_STRINGS] = numeric
        out[A.TOOL_RESULT_SHAPE_DIGEST] = canonical_json_digest(_shape(parsed))
    return out


_ID_KEY_RE = re.compile(r"(^|_|-)(id|uuid|date|day)$|[a-z](Id|ID|Date)$|^(id|date)$", re.I)


def _parsed(value: Any) -> Any:
    if isinstance(value, str | bytes):
        try:
            return json.loads(value)
        except (ValueError, TypeError):
            return None
    return value


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return str(a).strip().lower() == str(b).strip().lower()


def echo_mismatches(arguments: Any, result: Any) -> list[str]:
    """Identifier or date keys that a result echoes back with a different value than the call's
    arguments gave (an API answering about a neighbouring entity). Only id/date-like keys are
    compared: other echoed parameters, such as a converted value, may legitimately differ."""
    args, res = _parsed(arguments), _parsed(result)
    if not isinstance(args, dict) or not isinstance(res, dict):
        return []
    out = []
    for key, value in args.items():
        if (isinstance(key, str) and _ID_KEY_RE.search(key) and key in res
                and not isinstance(value, dict | list) and not isinstance(res[key], dict | list)
                and not _same_value(value, res[key])):
            out.append(key)
    return sorted(out)


def _string_leaves(value: Any, out: list[str], budget: list[int]) -> None:
    if budget[0] <= 0:
        return
    budget[0] -= 1
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _string_leaves(v, out, budget)
    elif isinstance(value, list):
        for v in value:
            _string_leaves(v, out, budget)


def message_text(messages: list[Any]) -> str | None:
    """The case-folded text of messages as argument grounding searches it; None without any part.

    Joining the non-None texts of single messages with newlines gives the text of all of them.
    """
    parts = _message_parts(messages)
    return "\n".join(parts).casefold() if parts else None


def _message_text(messages: list[Any]) -> str:
    return "\n".join(_message_parts(messages)).casefold()


def _message_parts(messages: list[Any]) -> list[str]:
    parts: list[str] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(_block_text(p) for p in content)
        for call in m.get("tool_calls") or []:
            if isinstance(call, dict):
                parts.append(str((call.get("function") or {}).get("arguments", "")))
    return parts


def _block_text(block: Any) -> str:
    """The text of one content block: a text block's text, an Anthropic ``tool_result``'s content
    (a string or text blocks) and a ``tool_use``'s input, which the conversation holds as well."""
    if not isinstance(block, dict):
        return str(block)
    text = block.get("text")
    if isinstance(text, str):
        return text
    inner = block.get("content")
    if isinstance(inner, str):
        return inner
    if isinstance(inner, list):
        return "\n".join(_block_text(p) for p in inner[:64])
    given = block.get("input")
    if isinstance(given, dict):
        return json.dumps(given, ensure_ascii=False, default=str)
    return ""


def _only_as_word_start(value: str, text: str, limit: int = 64) -> bool:
    """``value`` occurs in ``text``, and every occurrence that starts a word continues into a
    longer word ("lis" in "lisbon"): a value cut short, not one the conversation names."""
    start, seen = 0, 0
    while seen < limit:
        i = text.find(value, start)
        if i < 0:
            break
        start = i + 1
        if i > 0 and text[i - 1].isalnum():
            continue  # inside a word
        seen += 1
        j = i + len(value)
        # A word goes on through letters and digits, and through "-./:" between digits (a date or a
        # number cut short); "high" in "high-priority" is a word of its own.
        if not (j < len(text) and (text[j].isalnum() or (
                text[j] in "-./:" and j + 1 < len(text) and text[j + 1].isdigit() and text[j - 1].isdigit()))):
            return False  # the whole value is a word (or a whole date or number) of the conversation
    return seen > 0


REFERENCE_MAX_WORDS = 3
REFERENCE_MAX_CHARS = 64


def _names_something(value: str) -> bool:
    """A short value of a few words at most: a reference to an entity rather than composed text."""
    return len(value) <= REFERENCE_MAX_CHARS and len(value.split()) <= REFERENCE_MAX_WORDS


def argument_grounding(tool_calls: list[dict[str, Any]], messages: list[Any] | None, *,
                       text: str | None = None) -> dict[str, Any]:
    """Count string argument values (3+ characters, naming something: a few words at most) that
    the conversation never mentioned, and values it holds only as the start of a longer word (cut
    short on the way).

    Computed from the request the model answered, so it needs no content capture: only the counts
    are kept. A model inventing an entity (or a proxy substituting one) shows up in the first
    count, arguments cut part-way in the second. ``text``: the messages' case-folded text when
    already known (``annotate.Conversation``).
    """
    if not tool_calls or not messages:
        return {}
    values: list[str] = []
    for call in tool_calls:
        raw = (call.get("function") or {}).get("arguments")
        try:
            parsed = json.loads(raw) if isinstance(raw, str) else raw
        except (ValueError, TypeError):
            continue
        _string_leaves(parsed, values, [200])
    originals = [v.strip() for v in values if v.strip()]
    values = [v.casefold() for v in originals]
    if not values:
        return {A.RESPONSE_TOOL_ARGS_STRINGS: 0, A.RESPONSE_TOOL_ARGS_UNGROUNDED: 0,
                A.RESPONSE_TOOL_ARGS_CUT_VALUES: 0, A.RESPONSE_TOOL_ARGS_SHORT_CUT_VALUES: 0}
    if text is None:
        text = _message_text(messages)
    # Only values that name something (an id, a city, a person, an address) can be ungrounded: a
    # subject line or a message body the model composed is new text by nature.
    long_values = [v for v in values if len(v) >= 3 and _names_something(v)]
    ungrounded = sum(1 for v in long_values if v not in text)
    # A value in capitals is compared with the conversation's own case: "EUR" for "euros" is an
    # abbreviation written on purpose, "AA" for "AAPL" is a cut code (the raw text is joined only then).
    raw_text: str | None = None
    cut = []
    for v, raw in zip(values[:50], originals[:50], strict=False):
        if len(v) >= 40 or not _only_as_word_start(v, text):
            continue
        if raw.isupper():
            raw_text = raw_text if raw_text is not None else "\n".join(_message_parts(messages))
            if not _only_as_word_start(raw, raw_text):
                continue
        cut.append(len(v))
    # One or two letters start many words ("F" for a unit, "C"): counted apart, weaker.
    return {A.RESPONSE_TOOL_ARGS_STRINGS: len(long_values), A.RESPONSE_TOOL_ARGS_UNGROUNDED: ungrounded,
            A.RESPONSE_TOOL_ARGS_CUT_VALUES: sum(1 for n in cut if n >= 3),
            A.RESPONSE_TOOL_ARGS_SHORT_CUT_VALUES: sum(1 for n in cut if n < 3)}


# --- Response bodies and requests (OpenAI chat-completions shape) ----------------------------------

def body_signals(body: Any) -> dict[str, Any]:
    """How a 2xx chat-completions body failed to carry an answer: an error object where the
    completion should be (or inside the choice, with finish_reason ``error``), a safety block
    (Azure ``content_filter_results``, a guardrail intervention, Gemini's ``promptFeedback``), no
    ``choices`` (-1) or an empty list, a null message."""
    if isinstance(body, list) and len(body) == 1 and isinstance(body[0], dict) and "error" in body[0]:
        # Google's REST APIs can answer with a one-element list holding the error object
        return {A.RESPONSE_CHOICE_COUNT: -1, **_error_object_signals(body[0], answered=False)}
    if not isinstance(body, dict):  # null, a list, a string: no completion at all
        return {A.RESPONSE_CHOICE_COUNT: -1}
    choices = body.get("choices")
    out: dict[str, Any] = {A.RESPONSE_CHOICE_COUNT: len(choices) if isinstance(choices, list) else -1}
    out.update(_error_object_signals(body, answered=isinstance(choices, list) and bool(choices)))
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    if first is not None:
        out[A.RESPONSE_MESSAGE_NULL] = first.get("message", {}) is None and first.get("delta") is None
        msg = first.get("message")
        if isinstance(msg, dict) and isinstance(msg.get("refusal"), str) and msg["refusal"].strip():
            out[A.RESPONSE_REFUSAL] = True
        choice_err = first.get("error")
        if choice_err not in (None, "", {}, [], False) and A.RESPONSE_FAILURE not in out:
            reading = vocabulary.read_value({"error": choice_err})
            out[A.RESPONSE_FAILURE] = reading.meaning or vocabulary.GENERIC
            out[A.RESPONSE_FAILURE_EVIDENCE] = evidence_of(reading) or "choice_error"
    if A.RESPONSE_FAILURE not in out:
        blocked = _blocked(body, first)
        if blocked:
            out[A.RESPONSE_FAILURE] = "content_filter"
            out[A.RESPONSE_FAILURE_EVIDENCE] = blocked
    return out


def messages_body_signals(body: Any) -> dict[str, Any]:
    """How a 2xx Messages API body failed to carry an answer: Anthropic's error object
    (``{"type": "error", "error": {"type": "overloaded_error", ...}}``) where the message should be,
    as gateways and proxies pass it on with a 200 status."""
    if not isinstance(body, dict):
        return {}
    content = body.get("content")
    return _error_object_signals(body, answered=isinstance(content, list) and bool(content))


def _error_object_signals(body: dict[str, Any], *, answered: bool) -> dict[str, Any]:
    """An ``error`` member where a 2xx body's answer should be, or, in a body with no answer at all,
    any error report the vocabulary reads (MiniMax's ``base_resp`` with a non-zero status code):
    a body error, read for what it says. A body that answers is not read further."""
    if body.get("error") in (None, "", {}, [], False) and (answered or not vocabulary.read_value(body).is_error):
        return {}
    return {A.RESPONSE_BODY_ERROR: True, **error_body_signals(body)}


def _blocked(body: dict[str, Any], first: dict[str, Any] | None) -> str:
    """The published member that says a safety filter or guardrail blocked the answer, or ''."""
    results = first.get("content_filter_results") if first is not None else None
    prompt = body.get("prompt_filter_results")
    for where, res in (("content_filter_results", results), ("prompt_filter_results", prompt)):
        items = res if isinstance(res, list) else [res]
        for item in items[:8]:
            if isinstance(item, dict):
                inner = item.get("content_filter_results", item)
                if isinstance(inner, dict) and any(isinstance(v, dict) and v.get("filtered") is True
                                                   for v in list(inner.values())[:16]):
                    return f"flag azure:{where}"
    feedback = body.get("promptFeedback") or body.get("prompt_feedback")
    if isinstance(feedback, dict) and (feedback.get("blockReason") or feedback.get("block_reason")):
        return "flag gemini:promptFeedback.blockReason"
    if str(body.get("amazon-bedrock-guardrailAction", "")).upper() == "INTERVENED":
        return "flag bedrock:amazon-bedrock-guardrailAction"
    return ""


def error_body_signals(body: Any) -> dict[str, Any]:
    """What an error body says: the provider's code (OpenAI/Azure ``error.code`` or ``error.type``,
    Anthropic ``error.type``), its meaning read with the published vocabulary, and the error forms
    its words show (kept for readers of the older marker list)."""
    out: dict[str, Any] = {}
    err = body.get("error") if isinstance(body, dict) else None
    code = None
    if isinstance(err, dict):
        for key in ("code", "type", "status"):
            if isinstance(err.get(key), str | int) and not isinstance(err.get(key), bool) and err.get(key) != "":
                code = str(err[key])
                break
    if code:
        out[A.RESPONSE_ERROR_CODE] = code[:64]
    reading = vocabulary.read_value(body) if isinstance(body, dict) else vocabulary.NOTHING
    if not reading.is_error and isinstance(body, dict):  # {"message": ...}, {"detail": ...} bodies
        reading = vocabulary.read_value({"error": body})
    if reading.found:
        out[A.RESPONSE_FAILURE] = reading.meaning
        out[A.RESPONSE_FAILURE_EVIDENCE] = evidence_of(reading)
    try:
        words = json.dumps(body, ensure_ascii=False)[:2000] if isinstance(body, dict) else ""
    except (TypeError, ValueError):
        words = ""
    markers = error_markers(words)
    extra = {"rate_limit": "rate_limit", "timeout": "timeout", "content_filter": "filtered"}.get(reading.meaning)
    if extra and extra not in markers:
        markers.append(extra)
    out[A.RESPONSE_ERROR_MARKERS] = markers
    return out


def stream_event_signals(datas: Any) -> dict[str, Any]:
    """An error a stream reported in one of its events (``data: {"error": {...}}``, OpenRouter's
    mid-stream errors, a proxy's), read like an error body: its meaning and evidence, or {}."""
    for data in datas:
        if not isinstance(data, str) or '"error"' not in data or len(data) > 65_536:
            continue
        try:
            obj = json.loads(data)
        except ValueError:
            continue
        if isinstance(obj, dict):
            err = obj.get("error")
            choices = obj.get("choices")
            if err in (None, "", {}, [], False) and isinstance(choices, list) and choices and isinstance(
                    choices[0], dict):
                err = choices[0].get("error")
            if err not in (None, "", {}, [], False):
                reading = vocabulary.read_value({"error": err})
                return {A.RESPONSE_FAILURE: reading.meaning or vocabulary.GENERIC,
                        A.RESPONSE_FAILURE_EVIDENCE: evidence_of(reading) or "stream_error_event"}
    return {}


_ASKS_JSON_RE = re.compile(r"\bjson\b", re.I)


def request_format_signals(body: Any) -> dict[str, Any]:
    """Which answer format the request asked for: ``response_format`` and whether a system or user
    message asks for JSON (OpenAI's JSON mode requires the word, so prompts that want JSON say it)."""
    if not isinstance(body, dict):
        return {}
    out: dict[str, Any] = {}
    rf = body.get("response_format")
    if isinstance(rf, dict) and isinstance(rf.get("type"), str):
        out[A.REQUEST_RESPONSE_FORMAT] = rf["type"]
    asks = False
    for m in body.get("messages") or []:
        if isinstance(m, dict) and m.get("role") in ("system", "developer", "user"):
            c = m.get("content")
            text = c if isinstance(c, str) else " ".join(
                str(p.get("text", "")) for p in c if isinstance(p, dict)) if isinstance(c, list) else ""
            if _ASKS_JSON_RE.search(text[:20_000]):
                asks = True
                break
    out[A.REQUEST_ASKS_JSON] = asks
    return out
