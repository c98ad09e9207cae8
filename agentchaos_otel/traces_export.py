"""``agentchaos traces export``: stored traces replayed to an OTLP backend, with their verdicts.

Every span goes out with its original trace and span ids, parent, times, kind, status,
attributes (unknown ones included), events, resource and scope, through the exporter that
:func:`agentchaos_otel.otlp_exporters.span_exporter_from_env` builds (so protocol, endpoint, headers,
compression and timeout follow the standard variables). Added on the way, never stored:

- each diagnosis of the ``diagnoses`` table on the span it blames (see ``store.verdicts``), and
  summarised on the episode root; with no stored diagnoses, the rule diagnoser runs now on the
  failed episodes (``--diagnose rule`` forces that, ``--diagnose none`` sends spans only);
- each step's failure score from the ``predictions`` table (latest model) on the step's span,
  a ``failure_predicted`` event on the first alarmed step, and the episode's last score and
  alarm on the root.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agentchaos_otel import attributes as A
from agentchaos_otel import plugins
from agentchaos_otel.store.database.connect import StoreError, open_store
from agentchaos_otel.trace import verdicts

DIAGNOSE_MODES = ("auto", "stored", "rule", "none")
BATCH = 512


class ExportFailed(ValueError):
    """The backend did not accept a batch; the message is one line for the user."""


@dataclass
class ExportSummary:
    spans: int = 0
    traces: int = 0
    diagnoses: int = 0
    diagnoses_source: str = "none"  # "stored", "rule (computed now)" or "none"
    predictions: int = 0


def _json(value: Any, default: Any) -> Any:
    if value is None:
        return default
    if isinstance(value, (dict, list)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return default


def _tables(conn: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description or []]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


def stored_diagnoses(conn: duckdb.DuckDBPyConnection) -> dict[str, list[dict[str, Any]]]:
    if "diagnoses" not in _tables(conn):
        return {}
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in _rows(conn.execute("SELECT * FROM diagnoses ORDER BY trace_id, method")):
        out[d["trace_id"]].append(d)
    return dict(out)


def rule_diagnoses(db: str | os.PathLike[str]) -> dict[str, list[dict[str, Any]]]:
    """Verdicts of the installed rule diagnoser (``agentchaos_otel.verdicts`` entry point ``rule``)."""
    return plugins.load(plugins.VERDICTS, "rule")(db)


def stored_predictions(conn: duckdb.DuckDBPyConnection) -> dict[str, list[dict[str, Any]]]:
    """Step scores of the most recently scored model, per trace in step order."""
    if "predictions" not in _tables(conn):
        return {}
    rows = _rows(conn.execute(
        "SELECT * FROM predictions WHERE model_digest = (SELECT model_digest FROM predictions "
        "ORDER BY scored_ns DESC LIMIT 1) ORDER BY trace_id, step"))
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in rows:
        out[p["trace_id"]].append(p)
    return dict(out)


def _roots(conn: duckdb.DuckDBPyConnection) -> dict[str, str]:
    rows = conn.execute("SELECT trace_id, min(span_id) FROM episodes WHERE span_id IS NOT NULL GROUP BY 1")
    return {t: s for t, s in rows.fetchall()}


@dataclass
class _Additions:
    attrs: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]


def plan_additions(diagnoses: Mapping[str, Sequence[Mapping[str, Any]]],
                   predictions: Mapping[str, Sequence[Mapping[str, Any]]],
                   roots: Mapping[str, str]) -> dict[tuple[str, str], _Additions]:
    """(trace_id, span_id) -> the verdict attributes and events to add to that span."""
    out: dict[tuple[str, str], _Additions] = defaultdict(lambda: _Additions({}, []))
    for trace_id, ds in diagnoses.items():
        root = roots.get(trace_id)
        ordered = sorted(ds, key=lambda d: (verdicts.method_rank(d.get("method")), str(d.get("method"))))
        for i, d in enumerate(ordered):
            target = d.get("span_id") or root
            if target is None:
                continue
            add = out[(trace_id, target)]
            add.events.append((A.EVENT_DIAGNOSIS, verdicts.event_attributes(d)))
            if i == 0:
                add.attrs.update(verdicts.diagnosis_attributes(d))
                if root is not None:
                    out[(trace_id, root)].attrs.update(verdicts.root_summary(d))
    for trace_id, ps in predictions.items():
        alarmed = False
        for p in ps:
            if not p.get("span_id"):
                continue
            add = out[(trace_id, p["span_id"])]
            add.attrs.update(verdicts.prediction_attributes(p))
            if p["alarm"] and not alarmed:
                alarmed = True
                add.events.append((A.EVENT_FAILURE_PREDICTED, {**verdicts.prediction_attributes(p),
                                                               A.PREDICTOR_STEP: int(p["step"])}))
                if trace_id in roots:
                    out[(trace_id, roots[trace_id])].attrs[A.PREDICTOR_STEP] = int(p["step"])
        if trace_id in roots and ps:
            summary = verdicts.prediction_attributes(ps[-1])
            summary[A.PREDICTOR_ALARM] = alarmed
            out[(trace_id, roots[trace_id])].attrs.update(summary)
    return dict(out)


def to_readable_span(row: Mapping[str, Any], add: _Additions | None = None) -> ReadableSpan:
    """A stored row as an SDK span the OTLP encoders take, ids and times as stored."""
    trace_id = int(row["trace_id"], 16)
    flags = TraceFlags(TraceFlags.SAMPLED)
    ctx = SpanContext(trace_id, int(row["span_id"], 16), is_remote=False, trace_flags=flags)
    parent = (SpanContext(trace_id, int(row["parent_span_id"], 16), is_remote=False, trace_flags=flags)
              if row.get("parent_span_id") else None)
    attrs = dict(_json(row.get("attributes"), {}))
    events = [Event(str(e.get("name", "")), e.get("attributes") or {}, e.get("time_ns") or row.get("end_ns"))
              for e in _json(row.get("events"), []) if isinstance(e, dict)]
    if add is not None:
        attrs.update(add.attrs)
        end = row.get("end_ns") or row.get("start_ns")
        events.extend(Event(name, a, end) for name, a in add.events)
    status_code = StatusCode[row.get("status_code") or "UNSET"]
    message = row.get("status_message") if status_code == StatusCode.ERROR else None
    return ReadableSpan(
        name=row.get("name") or "", context=ctx, parent=parent,
        resource=Resource(_json(row.get("resource"), {})), attributes=attrs, events=events,
        kind=SpanKind[row.get("kind") or "INTERNAL"], status=Status(status_code, message),
        start_time=row.get("start_ns"), end_time=row.get("end_ns"),
        instrumentation_scope=InstrumentationScope(row.get("scope_name") or ""),
    )


def _span_rows(conn: duckdb.DuckDBPyConnection) -> Iterator[list[dict[str, Any]]]:
    cur = conn.execute("SELECT trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code, "
                       "status_message, scope_name, attributes, resource, events FROM spans "
                       "ORDER BY trace_id, start_ns, span_id")
    cols = [d[0] for d in cur.description or []]
    while batch := cur.fetchmany(BATCH):
        yield [dict(zip(cols, r, strict=True)) for r in batch]


def replay(db: str | os.PathLike[str], exporter: SpanExporter, *, diagnose: str = "auto") -> ExportSummary:
    """Send every stored span (with verdicts) through `exporter`; raises ExportFailed on a refused batch."""
    if diagnose not in DIAGNOSE_MODES:
        raise ValueError(f"unknown --diagnose {diagnose!r}; expected one of {', '.join(DIAGNOSE_MODES)}")
    summary = ExportSummary()
    with open_store(db, read_only=True) as conn:
        diagnoses = stored_diagnoses(conn) if diagnose in ("auto", "stored") else {}
        summary.diagnoses_source = "stored" if diagnoses else "none"
        predictions = stored_predictions(conn)
        roots = _roots(conn)
    if diagnose == "rule" or (diagnose == "auto" and not diagnoses):
        diagnoses = rule_diagnoses(db)
        summary.diagnoses_source = "rule (computed now)" if diagnoses else "none"
    summary.diagnoses = sum(len(v) for v in diagnoses.values())
    summary.predictions = sum(len(v) for v in predictions.values())
    additions = plan_additions(diagnoses, predictions, roots)
    traces: set[str] = set()
    with open_store(db, read_only=True) as conn:
        try:
            for rows in _span_rows(conn):
                spans = [to_readable_span(r, additions.get((r["trace_id"], r["span_id"]))) for r in rows]
                if exporter.export(spans) != SpanExportResult.SUCCESS:
                    raise ExportFailed(f"the OTLP endpoint refused a batch after {summary.spans} spans were sent "
                                       "(see the exporter's log line above)")
                summary.spans += len(spans)
                traces.update(r["trace_id"] for r in rows)
        except duckdb.Error as exc:
            raise StoreError(f"{db}: cannot read spans ({' '.join(str(exc).split())[:200]})") from None
    summary.traces = len(traces)
    return summary
