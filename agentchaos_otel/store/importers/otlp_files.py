"""OTLP trace files: JSON, JSON Lines (the Collector's file exporter) and protobuf.

Rows are made by the OTLP receiver's own parsers, so a span imported from a file is stored
exactly as if it had been sent to ``agentchaos traces receive``. Two differences between files
in the wild and the OTLP/JSON wire format are smoothed over first:

- ids: OTLP/JSON carries trace and span ids as hex, but files written with protobuf's generic
  JSON mapping (``MessageToJson``) carry them base64; both are accepted;
- protobuf files: one serialized ``TracesData``/``ExportTraceServiceRequest`` (same wire
  layout), or the Collector's ``format: proto`` stream of messages each prefixed by its 4-byte
  big-endian length.

This module also encodes plain Python attribute values as OTLP/JSON ``AnyValue`` objects, so the
other importers build OTLP/JSON documents and share the same parser.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import struct
from collections.abc import Iterator, Mapping
from typing import Any

from agentchaos_otel.store.receivers.otlp_http import BadPayload, rows_from_json, rows_from_protobuf

_HEX = frozenset("0123456789abcdefABCDEF")
_ID_LENGTHS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def _hex_id(value: Any, nbytes: int) -> Any:
    """A hex id as is; a base64 id (protobuf's JSON mapping) turned into hex."""
    if not isinstance(value, str) or not value:
        return value
    if len(value) == 2 * nbytes and set(value) <= _HEX:
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) == nbytes else value


def normalise_ids(doc: dict[str, Any]) -> dict[str, Any]:
    """Fix base64 ids in place in an OTLP/JSON trace document (spans and links)."""
    for rs in doc.get("resourceSpans") or []:
        for ss in (rs or {}).get("scopeSpans") or []:
            for sp in (ss or {}).get("spans") or []:
                if not isinstance(sp, dict):
                    continue
                for key, n in _ID_LENGTHS.items():
                    if key in sp:
                        sp[key] = _hex_id(sp[key], n)
                for link in sp.get("links") or []:
                    if isinstance(link, dict):
                        for key, n in (("traceId", 16), ("spanId", 8)):
                            if key in link:
                                link[key] = _hex_id(link[key], n)
    return doc


def rows_from_json_doc(doc: Any) -> list[dict[str, Any]]:
    if not isinstance(doc, dict) or "resourceSpans" not in doc:
        raise BadPayload("not an OTLP JSON trace document (no resourceSpans)")
    return rows_from_json(json.dumps(normalise_ids(doc)).encode())


def _length_prefixed(data: bytes) -> Iterator[bytes] | None:
    """The messages of a 4-byte-length-prefixed stream, or None when the data is not one."""
    parts = []
    pos = 0
    while pos < len(data):
        if pos + 4 > len(data):
            return None
        (size,) = struct.unpack(">I", data[pos:pos + 4])
        if size == 0 or pos + 4 + size > len(data):
            return None
        parts.append(data[pos + 4:pos + 4 + size])
        pos += 4 + size
    return iter(parts) if parts else None


def rows_from_protobuf_file(data: bytes) -> list[dict[str, Any]]:
    """Rows of a protobuf trace file, single message or length-prefixed stream."""
    parts = _length_prefixed(data)
    if parts is not None:
        try:
            rows: list[dict[str, Any]] = []
            for part in parts:
                rows.extend(rows_from_protobuf(part))
            if rows:
                return rows
        except BadPayload:
            pass  # a single message whose first bytes happen to read as a length
    rows = rows_from_protobuf(data)
    if not rows:
        raise BadPayload("no spans in this protobuf file (expected OTLP TracesData)")
    return rows


# --- encoding plain values as OTLP/JSON ------------------------------------------------------

def any_value(value: Any) -> dict[str, Any]:
    """An OTLP/JSON AnyValue for a plain value (dicts become kvlists, None an empty value)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)} if -2 ** 63 <= value < 2 ** 63 else {"stringValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value} if math.isfinite(value) else {}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": key_values(value)}}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def key_values(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": any_value(v)} for k, v in attrs.items()]


def trace_document(spans: list[dict[str, Any]], resource: Mapping[str, Any], scope: str) -> dict[str, Any]:
    """One OTLP/JSON document holding `spans` (already in OTLP/JSON span shape)."""
    return {"resourceSpans": [{"resource": {"attributes": key_values(resource)},
                               "scopeSpans": [{"scope": {"name": scope}, "spans": spans}]}]}
