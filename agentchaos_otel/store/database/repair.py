"""Make span rows storable at the store boundary, and say on the row that it happened.

DuckDB refuses a whole statement for one string that is not valid UTF-8 (a lone surrogate copied
from a provider answer) or one integer outside BIGINT (an OTLP time of 2^63 or more), and the spool
cannot even write such a string to its UTF-8 file. Without repair, one bad span takes every other
span of its batch with it. So every row passes through ``repair_row`` once on the write path:
invalid code points become U+FFFD in every string (column values, and keys and values nested in
the JSON columns, escaped or not), out-of-range integers are clamped to BIGINT, and the repaired
columns are listed under ``agentchaos.store.repaired`` in the row's attributes. Rows that need no
repair (nearly all) are returned as they are, after checks that run at C speed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database import schema

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
REPLACEMENT = "\ufffd"

_INT_COLUMNS = schema.SPAN_INT_COLUMNS
JSON_COLUMNS = ("attributes", "resource", "events")
_TEXT_COLUMNS = tuple(c for c in schema.SPAN_COLUMNS if c not in _INT_COLUMNS + JSON_COLUMNS)

_SURROGATE = re.compile("[\ud800-\udfff]")
# a JSON \\u escape of a surrogate: possibly a lone one, which DuckDB's JSON parser refuses
ESCAPED_SURROGATE_RE2 = r"\\u[dD][89a-fA-F]"  # the same pattern for Arrow's RE2 (store/columns.py)
_ESCAPED_SURROGATE = re.compile(ESCAPED_SURROGATE_RE2)


def clean_text(value: str) -> str:
    """``value`` with every code point UTF-8 cannot encode (lone surrogates) replaced by U+FFFD."""
    if value.isascii():
        return value
    return _SURROGATE.sub(REPLACEMENT, value)


def _clean_nested(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): _clean_nested(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_nested(v) for v in value]
    return value


def _json_suspect(text: str) -> bool:
    if text.isascii():
        return "\\u" in text and _ESCAPED_SURROGATE.search(text) is not None
    return _SURROGATE.search(text) is not None or _ESCAPED_SURROGATE.search(text) is not None


def _clean_json_text(text: str) -> str:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        # not JSON at all: the database will refuse it and the row goes to the rejected file alone
        return _SURROGATE.sub(REPLACEMENT, text)
    return json.dumps(_clean_nested(doc), ensure_ascii=False, separators=(",", ":"))


def _clamp(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    return min(max(value, INT64_MIN), INT64_MAX)


def _clean(row: Mapping[str, Any]) -> bool:
    """Fast path: every string ASCII without a \\u escape, every time within BIGINT (nearly all rows)."""
    joined = "".join([v for v in row.values() if v.__class__ is str])
    if not joined.isascii() or "\\u" in joined:
        return False
    for col in _INT_COLUMNS:
        v = row.get(col)
        if v.__class__ is int and not INT64_MIN <= v <= INT64_MAX:
            return False
    return True


def repair_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A storable copy of ``row`` (the row itself when nothing needed repair)."""
    if isinstance(row, dict) and _clean(row):
        return row
    repaired: list[str] = []
    out: dict[str, Any] | None = None
    for col in _TEXT_COLUMNS:
        v = row.get(col)
        if isinstance(v, str) and not v.isascii() and _SURROGATE.search(v):
            out = out if out is not None else dict(row)
            out[col] = clean_text(v)
            repaired.append(col)
    for col in _INT_COLUMNS:
        v = row.get(col)
        if isinstance(v, int) and not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX:
            out = out if out is not None else dict(row)
            out[col] = _clamp(v)
            repaired.append(col)
    for col in JSON_COLUMNS:
        v = row.get(col)
        if isinstance(v, str) and _json_suspect(v):
            cleaned = _clean_json_text(v)
            if cleaned != v:
                out = out if out is not None else dict(row)
                out[col] = cleaned
                repaired.append(col)
    if out is None:
        return row if isinstance(row, dict) else dict(row)
    _mark(out, repaired)
    return out


def _mark(row: dict[str, Any], repaired: list[str]) -> None:
    try:
        attrs = json.loads(row.get("attributes") or "{}")
    except (ValueError, RecursionError):
        return  # unparseable attributes: nothing to mark them on (the database decides)
    if not isinstance(attrs, dict):
        return
    before = attrs.get(A.STORE_REPAIRED)
    seen = [str(x) for x in before] if isinstance(before, list) else []
    attrs[A.STORE_REPAIRED] = sorted(set(seen) | set(repaired))
    row["attributes"] = json.dumps(attrs, ensure_ascii=False, separators=(",", ":"))


def repair_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``repair_row`` over a batch."""
    return [repair_row(r) for r in rows]


def was_repaired(row: Mapping[str, Any]) -> bool:
    """Whether ``repair_row`` changed anything in this row (it carries the marker)."""
    return A.STORE_REPAIRED in str(row.get("attributes") or "")
