"""The seven tool-result faults of the tool-response study (docs/design.md 3.3).

The tool has already run; these functions only decide what the agent is *shown*. They never
mutate the tool's own return value (the tool may hand out references to its internal state), and
they keep the Python shape the agent loop expects: a dict stays a dict, a list a list, JSON text
stays JSON text, except ``malformed_json``, whose whole point is a string that no longer parses.

The kinds fall in the study's two groups: ``timeout``, ``rate_limit`` and ``empty`` carry no
content; ``malformed_json`` and ``truncated`` carry half of it; ``key_rename`` and
``wrong_value`` carry all of it, renamed or wrong.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel.signals import is_json
from agentchaos_otel.tool_signals import parsed_result, result_text

TOOL_FAULT_KINDS = ("timeout", "rate_limit", "empty", "malformed_json", "truncated", "key_rename",
                    "wrong_value")
# The study's split: faults that take the content away vs. those that still deliver (some of) it.
CONTENT_FREE_KINDS = ("timeout", "rate_limit", "empty")

TIMEOUT_RESULT = {"error": "timeout"}
RATE_LIMIT_RESULT = {"error": "rate_limit", "status": 429}

# malformed_json cuts the serialised result at a point drawn from this share of its length, so
# the agent sees a real beginning (keys, first values) but never the closing brackets.
MALFORMED_CUT_RANGE = (0.3, 0.7)
# wrong_value shifts numbers by this relative amount, up or down.
WRONG_VALUE_SHIFT = (0.01, 0.10)

_ISO_DATE_RE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_STRING_ID_RE = re.compile(r"^([A-Za-z][A-Za-z0-9]*[-_#:/]?|)(\d+)$")
# "order_id", "ids", "accountNumber", "userID"; case-sensitive camel suffix so "paid" is no id.
_ID_KEY_RE = re.compile(r"(^|[_\-\s])(?i:id|ids|uid|uuid|no|number|num)$|[a-z0-9](Id|Ids|ID|IDs|Number|No)$")
_WORD_SPLIT_RE = re.compile(r"[_\-\s]+|(?<=[a-z0-9])(?=[A-Z])")


class UnknownToolFault(ValueError):
    """A fault kind outside TOOL_FAULT_KINDS."""


@dataclass
class EpisodeToolState:
    """What must persist between the tool calls of one episode.

    The study's key_rename is a schema drift, not noise: once ``order_id`` has become ``orderId``
    it stays ``orderId`` for the rest of the episode, so an agent that notices can adapt. Each
    key's new name is drawn from a random stream derived from (seed, key), so it does not depend
    on the order in which keys happen to be met (unless two keys would drift onto one name: the
    later one then takes its next choice, so no two keys ever merge).
    """

    seed: int = 0
    renames: dict[str, str] = field(default_factory=dict)

    def rename(self, key: str) -> str:
        if key in self.renames:
            return self.renames[key]
        taken = set(self.renames.values()) | set(self.renames)
        rng = random.Random(f"key_rename:{self.seed}:{key}")
        styles = list(_RENAME_STYLES)
        rng.shuffle(styles)
        new = ""
        for style in styles:
            candidate = style(key)
            if candidate and candidate != key and candidate not in taken:
                new = candidate
                break
        n = 2
        while not new or new in taken or new == key:
            new = f"{key}_{n}"
            n += 1
        self.renames[key] = new
        return new


def _words(key: str) -> list[str]:
    return [w for w in _WORD_SPLIT_RE.split(key) if w]


def _camel(key: str) -> str:
    w = _words(key)
    return w[0].lower() + "".join(x[:1].upper() + x[1:].lower() for x in w[1:]) if w else ""


def _pascal(key: str) -> str:
    return "".join(x[:1].upper() + x[1:].lower() for x in _words(key))


def _kebab(key: str) -> str:
    return "-".join(x.lower() for x in _words(key))


def _snake(key: str) -> str:
    return "_".join(x.lower() for x in _words(key))


def _upper(key: str) -> str:
    return "_".join(x.upper() for x in _words(key))


def _abbreviate(key: str) -> str:
    # "quantity" -> "qntty", "user_id" -> "usr_id": the shortened names real APIs drift to.
    return "_".join(x[0] + re.sub(r"[aeiouAEIOU]", "", x[1:]) if len(x) > 3 else x for x in _words(key))


def _prefixed(key: str) -> str:
    return "data_" + _snake(key)


def _suffixed(key: str) -> str:
    return _snake(key) + "_value"


_RENAME_STYLES: tuple[Callable[[str], str], ...] = (_camel, _pascal, _kebab, _snake, _upper, _abbreviate,
                                                    _prefixed, _suffixed)


class UntransformableResult(ValueError):
    """A result that is not data (a generator, a model object ...): only content-free kinds apply."""


# What tools return as data. Anything else the agent framework serialises its own way, so the
# content-carrying kinds leave it alone rather than guess that serialisation.
_DATA_TYPES = (dict, list, tuple, str, int, float, bool, type(None))


def _via_text(result: str, structured: Callable[[Any], Any], plain: Callable[[str], str]) -> str:
    """Transform JSON text through its parsed value (so it stays JSON), other text directly."""
    try:
        value = json.loads(result)
    except ValueError:
        return plain(result)
    return json.dumps(structured(value), ensure_ascii=False)


# --- content-free kinds ------------------------------------------------------------------------
def _error_object(obj: dict[str, Any], result: Any) -> Any:
    # A tool that answers in text gets its error as JSON text: the agent loop passes strings on
    # unchanged, and an error object has no list or number form.
    return json.dumps(obj) if isinstance(result, str) else dict(obj)


def _empty(result: Any) -> Any:
    if isinstance(result, dict):
        return {}
    if isinstance(result, list):
        return []
    if isinstance(result, tuple):
        return ()
    if isinstance(result, str):
        return ""
    if result is None:
        return None
    return ""


# --- malformed_json ----------------------------------------------------------------------------
def _malformed(result: Any, rng: random.Random) -> str:
    text = result_text(result)
    cut = _invalid_cut(text, rng)
    if cut is None:
        # A bare number (every prefix of "12345" parses) or a one-character text: cut the result
        # as it would look inside an object instead, so the agent still sees broken JSON.
        text = json.dumps({"result": parsed_result(result)}, ensure_ascii=False, default=str)
        cut = _invalid_cut(text, rng)
    return text[:cut] if cut is not None else text[: max(1, len(text) // 2)]


def _invalid_cut(text: str, rng: random.Random) -> int | None:
    n = len(text)
    if n < 2:
        return None
    lo = max(1, math.ceil(MALFORMED_CUT_RANGE[0] * n))
    hi = max(lo, min(n - 1, math.floor(MALFORMED_CUT_RANGE[1] * n)))
    cut = rng.randint(lo, hi)
    # Walk back until the prefix stops parsing: prefixes of objects, arrays and strings never
    # parse, but a cut right after a number or literal at top level can.
    while cut >= 1:
        prefix = text[:cut]
        if prefix.strip() and not is_json(prefix):
            return cut
        cut -= 1
    return None


# --- truncated ---------------------------------------------------------------------------------
def _kept(n: int) -> int:
    """How many leading items survive: the latter half (rounded down) is dropped."""
    return n - n // 2


def _truncate(value: Any) -> Any:
    if isinstance(value, dict):
        items = list(value.items())[: _kept(len(value))]
        return {k: _truncate(v) for k, v in items}
    if isinstance(value, list | tuple):
        kept = [_truncate(v) for v in value[: _kept(len(value))]]
        return tuple(kept) if isinstance(value, tuple) else kept
    return value


def _truncate_top(value: Any) -> Any:
    # A bare string has no arrays or keys to drop; it loses its latter half instead.
    return value[: _kept(len(value))] if isinstance(value, str) else _truncate(value)


def _truncated(result: Any) -> Any:
    if isinstance(result, str):
        return _via_text(result, _truncate_top, _truncate_top)
    return _truncate(result)


# --- key_rename --------------------------------------------------------------------------------
def _rename(value: Any, state: EpisodeToolState) -> Any:
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            new = state.rename(k) if isinstance(k, str) else k
            if new in out:  # two keys drifted onto one name: keep both rather than lose data
                new = f"{new}_{len(out)}"
            out[new] = _rename(v, state)
        return out
    if isinstance(value, list | tuple):
        seq = [_rename(v, state) for v in value]
        return tuple(seq) if isinstance(value, tuple) else seq
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return value


def _key_renamed(result: Any, state: EpisodeToolState) -> Any:
    if isinstance(result, str):
        # Plain text has no keys and no numbers to turn into strings.
        return _via_text(result, lambda v: _rename(v, state), lambda t: t)
    return _rename(result, state)


# --- wrong_value -------------------------------------------------------------------------------
def _is_id_key(key: Any) -> bool:
    return isinstance(key, str) and bool(_ID_KEY_RE.search(key))


def _decimals(x: float) -> int:
    text = repr(x)
    if "e" in text or "E" in text or "." not in text:
        return 6
    return min(6, len(text.split(".")[1]))


def _shift_number(x: int | float, rng: random.Random) -> int | float:
    pct = rng.uniform(*WRONG_VALUE_SHIFT)
    sign = rng.choice((-1, 1))
    if isinstance(x, int):
        return x + sign * max(1, round(abs(x) * pct))
    if not math.isfinite(x):
        return x
    if x == 0:
        return sign * round(pct, 2)
    places = _decimals(x)
    new = round(x * (1 + sign * pct), places)
    if new == x:
        new = round(x + sign * 10 ** -places, places)
    return float(new)


def _neighbour_id(x: int, rng: random.Random) -> int:
    if x <= 0:
        return x + 1
    return x + rng.choice((-1, 1))


def _shift_string_id(text: str, rng: random.Random) -> str:
    m = _STRING_ID_RE.match(text)
    if not m:
        return text
    prefix, digits = m.groups()
    new = _neighbour_id(int(digits), rng)
    return prefix + str(new).zfill(len(digits))


def _move_dates(text: str, rng: random.Random) -> str:
    def move(m: re.Match[str]) -> str:
        try:
            day = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            day = day + dt.timedelta(days=rng.choice((-1, 1)))
        except (ValueError, OverflowError):
            return m.group(0)
        return day.isoformat()

    return _ISO_DATE_RE.sub(move, text)


def _swap_two(seq: list[Any], rng: random.Random) -> None:
    """Swap two elements that differ, so the swap is visible; no-op when all are equal."""
    n = len(seq)
    if n < 2:
        return
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if seq[i] != seq[j]] if n <= 64 else []
    if n > 64:
        for _ in range(32):
            i, j = rng.sample(range(n), 2)
            if seq[i] != seq[j]:
                pairs = [(i, j)]
                break
    if pairs:
        i, j = rng.choice(pairs)
        seq[i], seq[j] = seq[j], seq[i]


def _wrong(value: Any, rng: random.Random, key: Any = None) -> Any:
    if isinstance(value, dict):
        return {k: _wrong(v, rng, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        seq = [_wrong(v, rng, key) for v in value]
        _swap_two(seq, rng)
        return tuple(seq) if isinstance(value, tuple) else seq
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int) and _is_id_key(key):
        return _neighbour_id(value, rng)
    if isinstance(value, int | float):
        return _shift_number(value, rng)
    if isinstance(value, str):
        if _ISO_DATE_RE.search(value):
            return _move_dates(value, rng)
        if _is_id_key(key) or (_STRING_ID_RE.match(value) and not value.isdigit()):
            return _shift_string_id(value, rng)
    return value


def _wrong_valued(result: Any, rng: random.Random) -> Any:
    if isinstance(result, str):
        return _via_text(result, lambda v: _wrong(v, rng), lambda t: _wrong(t, rng))
    return _wrong(result, rng)


def apply_tool_fault(kind: str, result: Any, *, rng: random.Random, state: EpisodeToolState) -> Any:
    """What the agent is shown instead of ``result`` under fault ``kind``.

    Seeded through ``rng`` (cut points, shift sizes, swapped positions) and ``state`` (the
    episode's key renames). Whether anything changed is for the caller to check by digest: some
    results have nothing a kind can touch (``None`` under ``empty``, plain text under
    ``key_rename``). Bytes are treated as UTF-8 text and returned as bytes; results that are not
    data raise ``UntransformableResult`` for the content-carrying kinds.
    """
    if kind not in TOOL_FAULT_KINDS:
        raise UnknownToolFault(f"unknown tool fault {kind!r}; expected one of {', '.join(TOOL_FAULT_KINDS)}")
    if isinstance(result, bytes | bytearray):
        try:
            text = bytes(result).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UntransformableResult("binary result is not UTF-8 text") from exc
        shown = apply_tool_fault(kind, text, rng=rng, state=state)
        return shown.encode("utf-8") if isinstance(shown, str) else shown
    if kind == "timeout":
        return _error_object(TIMEOUT_RESULT, result)
    if kind == "rate_limit":
        return _error_object(RATE_LIMIT_RESULT, result)
    if kind == "empty":
        return _empty(result)
    if not isinstance(result, _DATA_TYPES):
        raise UntransformableResult(f"{kind} needs data; the tool returned a {type(result).__name__}")
    if kind == "malformed_json":
        return _malformed(result, rng)
    if kind == "truncated":
        return _truncated(result)
    if kind == "key_rename":
        return _key_renamed(result, state)
    return _wrong_valued(result, rng)
