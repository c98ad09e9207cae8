"""OpenInference span exports (Phoenix / Arize): span dicts as Phoenix's API and dataframes give them.

Accepted shapes, one span per dict:

- Phoenix's REST/JSON span: ``{"name", "context": {"trace_id", "span_id"}, "parent_id",
  "span_kind", "start_time", "end_time", "status_code", "status_message", "attributes",
  "events"}``, with ``attributes`` nested (``{"llm": {"token_count": {"prompt": 5}}}``) or flat;
- a row of ``get_spans_dataframe()`` saved as JSON records or Parquet: the same fields with
  flattened column names (``context.span_id``, ``attributes.llm.model_name``) and times as ISO
  text, epoch milliseconds or Parquet timestamps.

Nested attributes are flattened to OpenInference's dotted names (lists of objects get their
index, ``llm.input_messages.0.message.role``), so the store's views read them as they read
live OpenInference spans; every attribute is kept, known or not. ``span_kind`` fills
``openinference.span.kind`` when the attributes lack it.
"""

from __future__ import annotations

import datetime
import hashlib
import math
from collections.abc import Mapping
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.store.importers.otlp_files import key_values, rows_from_json_doc, trace_document
from agentchaos_otel.store.receivers.otlp_http import BadPayload

_STATUS = {"OK": 1, "ERROR": 2, "UNSET": 0}
_HEX = frozenset("0123456789abcdef")
SCOPE = "openinference.import"


def is_phoenix_span(record: Any) -> bool:
    if not isinstance(record, Mapping):
        return False
    ctx = record.get("context")
    has_ctx = isinstance(ctx, Mapping) and "span_id" in ctx
    return has_ctx or "context.span_id" in record


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    """OpenInference's flattening: nested objects by dots, lists of objects by index."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}", out)
    elif not _missing(value):
        out[prefix] = value


def _field(record: Mapping[str, Any], *path: str) -> Any:
    """`record["a"]["b"]` or the dataframe's flattened `record["a.b"]`."""
    node: Any = record
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        node = record.get(".".join(path))
    return None if _missing(node) else node


def time_ns(value: Any) -> int | None:
    """ISO text or an epoch number in s, ms, µs or ns (told apart by magnitude)."""
    if _missing(value) or value == "":
        return None
    if isinstance(value, datetime.datetime):  # Parquet timestamps
        value = value.isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = float(value)
        scale = 1 if v > 1e17 else 1e3 if v > 1e14 else 1e6 if v > 1e11 else 1e9
        return int(v * scale)
    if isinstance(value, str):
        text = value.strip()
        if text.replace(".", "", 1).isdigit():
            return time_ns(float(text))
        try:
            dt = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise BadPayload(f"unreadable timestamp {value!r}") from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=datetime.UTC)
        delta = dt - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
        return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    raise BadPayload(f"unreadable timestamp {value!r}")


def _id(value: Any, nbytes: int) -> str | None:
    """A hex id of the right length; other ids (UUIDs, numbers) hashed to one, deterministically."""
    if _missing(value) or value == "":
        return None
    text = str(value).lower().replace("-", "")
    if len(text) == 2 * nbytes and set(text) <= _HEX:
        return text
    return hashlib.sha256(str(value).encode()).hexdigest()[: 2 * nbytes]


def _attributes(record: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    nested = record.get("attributes")
    if isinstance(nested, Mapping):
        flatten(nested, "", out)
    for key, value in record.items():  # dataframe columns
        if key.startswith("attributes.") and not _missing(value):
            flatten(value, key[len("attributes."):], out)
    kind = record.get("span_kind")
    if isinstance(kind, str) and kind and A.OI_SPAN_KIND not in out:
        out[A.OI_SPAN_KIND] = kind.upper()
    return out


def _events(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    events = record.get("events")
    out = []
    for e in events if isinstance(events, list) else []:
        if not isinstance(e, Mapping):
            continue
        attrs: dict[str, Any] = {}
        flatten(e.get("attributes") or {}, "", attrs)
        ts = time_ns(e.get("timestamp", e.get("time")))
        out.append({"name": str(e.get("name", "")), "timeUnixNano": str(ts or 0), "attributes": key_values(attrs)})
    return out


def _span(record: Mapping[str, Any]) -> dict[str, Any]:
    trace_id = _id(_field(record, "context", "trace_id"), 16)
    span_id = _id(_field(record, "context", "span_id"), 8)
    if trace_id is None or span_id is None:
        raise BadPayload(f"span {record.get('name')!r} has no context.trace_id / context.span_id")
    start = time_ns(record.get("start_time"))
    end = time_ns(record.get("end_time"))
    status = str(record.get("status_code") or "UNSET").upper()
    span: dict[str, Any] = {
        "traceId": trace_id, "spanId": span_id, "name": str(record.get("name") or ""),
        "kind": 1, "startTimeUnixNano": str(start or 0), "endTimeUnixNano": str(end or start or 0),
        "attributes": key_values(_attributes(record)), "events": _events(record),
        "status": {"code": _STATUS.get(status, 0), "message": str(record.get("status_message") or "")},
    }
    parent = _id(record.get("parent_id"), 8)
    if parent:
        span["parentSpanId"] = parent
    return span


def rows_from_phoenix(records: list[Mapping[str, Any]], service_name: str | None = None) -> list[dict[str, Any]]:
    spans = [_span(r) for r in records]
    if not spans:
        return []
    resource = {A.SERVICE_NAME: service_name} if service_name else {}
    return rows_from_json_doc(trace_document(spans, resource, SCOPE))
