"""``agentchaos traces export``: stored traces replayed to an OTLP backend, with their verdicts.

Every span goes out with its original trace and span ids, parent, times, kind, status,
attributes (unknown ones included), events, resource and scope, through the exporter that
:func:`agentchaos_otel.otlp_exporters.span_exporter_from_env` builds (so protocol, endpoint, headers,
compression and timeout follow the standard variables). Added on the way, never stored:

- each diagnosis of the ``diagnoses`` table on the span it blames (see ``store.verdicts``), and
  summarised on the episode root; with no stored diagnoses, the rule diagnoser runs now on the
  failed episodes (``--diagnose rule`` forces that, ``--diagnose none`` sends spans only);
- the verdict in front of a failed root's status message (``truncate at step 2: finish_reason=
  length, reply cut at 21 chars; the task's outcome is a failure``), because trace lists show a
  status message where they show no attribute;
- each step's failure score from the ``predictions`` table (latest model) on the step's span,
  a ``failure_predicted`` event on the first alarmed step, and the episode's last score and
  alarm on the root;
- the attributes of ``OTEL_RESOURCE_ATTRIBUTES`` and the chosen project
  (``openinference.project.name``) over every span's stored resource (see :class:`Destination`).

For Phoenix (:func:`export`): episodes of one campaign run, or of one session the spans already
name (``session.id`` / ``gen_ai.conversation.id``), share a ``session.id`` prefixed with the
project (Phoenix's session ids are global); after the spans, every diagnosis becomes span
annotations on the blamed span and the root (``agentchaos_otel.phoenix``).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agentchaos_otel import attributes as A
from agentchaos_otel import phoenix as phx
from agentchaos_otel import plugins
from agentchaos_otel.store.database.connect import StoreError, open_store
from agentchaos_otel.trace import verdicts

DIAGNOSE_MODES = ("auto", "stored", "rule", "none")
BATCH = 512


class ExportFailed(ValueError):
    """The backend did not accept a batch; the message is one line for the user."""


@dataclass(frozen=True)
class Destination:
    """What the receiving backend gets besides the stored spans.

    ``resource`` is merged over every span's stored resource (``OTEL_RESOURCE_ATTRIBUTES`` of the
    exporting process, see :func:`env_resource`); ``project`` sets ``openinference.project.name``
    (Phoenix's project); ``sessions`` groups episodes as Phoenix sessions.
    """

    resource: Mapping[str, Any] = field(default_factory=dict)
    project: str | None = None
    sessions: bool = False


@dataclass
class ExportSummary:
    spans: int = 0
    traces: int = 0
    diagnoses: int = 0
    diagnoses_source: str = "none"  # "stored", "rule (computed now)" or "none"
    predictions: int = 0
    sessions: int = 0  # distinct session ids given to episodes (Phoenix)
    annotations: phx.Posted | None = None  # Phoenix span annotations, when posted
    # The verdicts the export attached (trace id -> diagnoses) and each episode's root span.
    verdicts: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False)
    roots: dict[str, str] = field(default_factory=dict, repr=False)


def env_resource() -> dict[str, Any]:
    """The attributes of ``OTEL_RESOURCE_ATTRIBUTES`` (parsed by the SDK's detector).

    ``OTEL_SERVICE_NAME`` is not applied: stored spans keep the service that recorded them.
    """
    from opentelemetry.sdk.resources import OTELResourceDetector

    raw = os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    attrs = dict(OTELResourceDetector().detect().attributes)
    if A.SERVICE_NAME not in {item.split("=", 1)[0].strip() for item in raw.split(",")}:
        attrs.pop(A.SERVICE_NAME, None)
    return attrs


def choose_project(option: str | None, headers: Mapping[str, str] | None = None,
                   resource: Mapping[str, Any] | None = None) -> str | None:
    """The Phoenix project: ``--project``, else an ``x-project-name`` header, else the resource variable's."""
    if option:
        return option
    for key, value in (headers or {}).items():
        if key.lower() == "x-project-name" and value:
            return value
    found = (resource or {}).get(A.OI_PROJECT_NAME)
    return str(found) if found else None


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


def episode_roots(db: str | os.PathLike[str]) -> dict[str, str]:
    """Trace id -> the span id of its episode root."""
    with open_store(db, read_only=True) as conn:
        return _roots(conn)


def _ns(value: datetime) -> int:
    return int(value.replace(tzinfo=UTC).timestamp() * 1e9)


def session_keys(conn: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Trace id -> the session its episode belongs to (before the project prefix).

    A session the spans already name (``session.id``, else ``gen_ai.conversation.id``) wins;
    otherwise the campaign run (``campaign_runs``) whose time span holds the episode's start.
    """
    def attr(key: str) -> str:
        return f"json_extract_string(attributes, '$.\"{key}\"')"

    out: dict[str, str] = {}
    if "campaign_runs" in _tables(conn):
        runs = [(rid, _ns(started), None if finished is None else _ns(finished)) for rid, started, finished in
                conn.execute("SELECT id, started, finished FROM campaign_runs WHERE started IS NOT NULL "
                             "ORDER BY started").fetchall()]
        if runs:
            starts = conn.execute("SELECT trace_id, min(start_ns) FROM episodes GROUP BY 1").fetchall()
            for trace_id, start in starts:
                chosen = [rid for rid, lo, hi in runs
                          if start is not None and lo <= start and (hi is None or start <= hi)]
                if chosen:
                    out[trace_id] = f"campaign {chosen[-1]}"
    for trace_id, key in conn.execute(
            f"SELECT trace_id, min(coalesce({attr(A.OI_SESSION_ID)}, {attr(A.GEN_AI_CONVERSATION_ID)})) "
            f"FROM spans WHERE coalesce({attr(A.OI_SESSION_ID)}, {attr(A.GEN_AI_CONVERSATION_ID)}) IS NOT NULL "
            "GROUP BY 1").fetchall():
        out[trace_id] = key
    return out


@dataclass
class _Additions:
    attrs: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status: Mapping[str, Any] | None = None  # the diagnosis whose verdict leads a failed root's status


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
                    out[(trace_id, root)].status = d
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


def to_readable_span(row: Mapping[str, Any], add: _Additions | None = None,
                     destination: Destination | None = None, session: str | None = None) -> ReadableSpan:
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
    if add is not None and add.status is not None and (
            status_code == StatusCode.ERROR or attrs.get(A.EPISODE_SUCCESS) is False):
        status_code, message = StatusCode.ERROR, verdicts.root_status(add.status, message)
    resource = dict(_json(row.get("resource"), {}))
    if destination is not None:
        resource.update(destination.resource)
        if destination.project:
            resource[A.OI_PROJECT_NAME] = destination.project
    if session is not None:  # Phoenix's session ids are global: prefixed with the trace's project
        attrs[A.OI_SESSION_ID] = f"{resource.get(A.OI_PROJECT_NAME) or 'default'}:{session}"
    return ReadableSpan(
        name=row.get("name") or "", context=ctx, parent=parent,
        resource=Resource(resource), attributes=attrs, events=events,
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


def replay(db: str | os.PathLike[str], exporter: SpanExporter, *, diagnose: str = "auto",
           destination: Destination | None = None) -> ExportSummary:
    """Send every stored span (with verdicts) through `exporter`; raises ExportFailed on a refused batch."""
    if diagnose not in DIAGNOSE_MODES:
        raise ValueError(f"unknown --diagnose {diagnose!r}; expected one of {', '.join(DIAGNOSE_MODES)}")
    summary = ExportSummary()
    with open_store(db, read_only=True) as conn:
        diagnoses = stored_diagnoses(conn) if diagnose in ("auto", "stored") else {}
        summary.diagnoses_source = "stored" if diagnoses else "none"
        predictions = stored_predictions(conn)
        roots = _roots(conn)
        sessions = session_keys(conn) if destination is not None and destination.sessions else {}
    if diagnose == "rule" or (diagnose == "auto" and not diagnoses):
        diagnoses = rule_diagnoses(db)
        summary.diagnoses_source = "rule (computed now)" if diagnoses else "none"
    summary.diagnoses = sum(len(v) for v in diagnoses.values())
    summary.predictions = sum(len(v) for v in predictions.values())
    summary.verdicts, summary.roots = {k: list(v) for k, v in diagnoses.items()}, roots
    additions = plan_additions(diagnoses, predictions, roots)
    traces: set[str] = set()
    with open_store(db, read_only=True) as conn:
        try:
            for rows in _span_rows(conn):
                spans = [to_readable_span(r, additions.get((r["trace_id"], r["span_id"])), destination,
                                          sessions.get(r["trace_id"])) for r in rows]
                if exporter.export(spans) != SpanExportResult.SUCCESS:
                    raise ExportFailed(f"the OTLP endpoint refused a batch after {summary.spans} spans were sent "
                                       "(see the exporter's log line above)")
                summary.spans += len(spans)
                traces.update(r["trace_id"] for r in rows)
        except duckdb.Error as exc:
            raise StoreError(f"{db}: cannot read spans ({' '.join(str(exc).split())[:200]})") from None
    summary.traces = len(traces)
    summary.sessions = len({sessions[t] for t in traces if t in sessions})
    return summary


PHOENIX_CHOICES = ("auto", "off")


def find_phoenix(choice: str, endpoint: str | None, protocol: str | None = None,
                 headers: Mapping[str, str] | None = None) -> phx.PhoenixClient | None:
    """The Phoenix to annotate, if any: ``auto`` asks the OTLP/HTTP endpoint's server whether it is
    Phoenix (``GET /arize_phoenix_version``), ``off`` never annotates, a URL names Phoenix itself
    (needed with gRPC, whose port is not Phoenix's web port)."""
    from agentchaos_otel.otlp_exporters import GRPC, configured_endpoint, resolve_protocol

    if choice == "off":
        return None
    if choice == "auto":
        target = configured_endpoint("traces", endpoint, protocol)
        if target is None or resolve_protocol("traces", protocol) == GRPC:
            return None
        client = phx.PhoenixClient(phx.base_url(target), headers=headers)
        try:
            if client.version() is not None:
                return client
        except phx.PhoenixError:
            pass  # not reachable: the export itself says so
        client.close()
        return None
    client = phx.PhoenixClient(phx.base_url(choice), headers=headers)
    try:
        if client.version() is None:
            raise phx.PhoenixError(f"{client.base} answers, but not as Phoenix (no {phx.VERSION_PATH})")
    except phx.PhoenixError:
        client.close()
        raise
    return client


def annotate_phoenix(phoenix: phx.PhoenixClient, diagnoses: Mapping[str, Sequence[Mapping[str, Any]]],
                     roots: Mapping[str, str], *, wait_s: float = phx.DEFAULT_WAIT_S) -> phx.Posted:
    """Every diagnosis as span annotations on its blamed span and its episode root (see ``phoenix``)."""
    return phoenix.post_annotations(phx.annotations(diagnoses, roots), wait_s=wait_s)


def annotate_store(db: str | os.PathLike[str], diagnoses: Sequence[Mapping[str, Any]], url: str, *,
                   headers: Mapping[str, str] | None = None, wait_s: float = phx.DEFAULT_WAIT_S) -> phx.Posted:
    """``diagnose --phoenix URL``: annotate the spans of a store's episodes that Phoenix already has."""
    by_trace: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for d in diagnoses:
        by_trace[str(d["trace_id"])].append(d)
    client = find_phoenix(url, None, headers=headers) if url not in PHOENIX_CHOICES else None
    if client is None:
        raise phx.PhoenixError(f"--phoenix needs Phoenix's URL (e.g. http://127.0.0.1:6006), not {url!r}")
    with client:
        return annotate_phoenix(client, by_trace, episode_roots(db), wait_s=wait_s)


def export(db: str | os.PathLike[str], exporter: SpanExporter, *, diagnose: str = "auto",
           destination: Destination | None = None, phoenix: phx.PhoenixClient | None = None,
           wait_s: float = phx.DEFAULT_WAIT_S) -> ExportSummary:
    """``traces export``: replay the spans; for Phoenix, then annotate them with their verdicts."""
    if phoenix is not None:
        destination = dataclasses.replace(destination or Destination(), sessions=True)
    summary = replay(db, exporter, diagnose=diagnose, destination=destination)
    if phoenix is not None and summary.verdicts:
        exporter.force_flush()
        summary.annotations = annotate_phoenix(phoenix, summary.verdicts, summary.roots, wait_s=wait_s)
    return summary


def export_file(db: str | os.PathLike[str], *, endpoint: str | None = None, protocol: str | None = None,
                headers: Mapping[str, str] | None = None, timeout: float | None = None, diagnose: str = "auto",
                project: str | None = None, phoenix: str = "auto", wait_s: float = phx.DEFAULT_WAIT_S) -> list[str]:
    """``agentchaos traces export``: exporter from the OTLP settings, project from the option, header or
    ``OTEL_RESOURCE_ATTRIBUTES``, Phoenix found (or named); the lines to print come back."""
    from agentchaos_otel.otlp_exporters import span_exporter_from_env
    from agentchaos_otel.trace.redacting import RedactingSpanExporter

    resource = env_resource()
    destination = Destination(resource=resource, project=choose_project(project, headers, resource))
    px = find_phoenix(phoenix, endpoint, protocol, headers)
    try:
        exporter = RedactingSpanExporter(span_exporter_from_env(endpoint=endpoint, protocol=protocol,
                                                                headers=headers, timeout=timeout))
        try:
            summary = export(db, exporter, diagnose=diagnose, destination=destination, phoenix=px, wait_s=wait_s)
        finally:
            exporter.shutdown()
    finally:
        if px is not None:
            px.close()
    lines = [f"exported {summary.spans} spans of {summary.traces} traces; {summary.diagnoses} diagnoses "
             f"({summary.diagnoses_source}) and {summary.predictions} step predictions attached"]
    if px is not None:
        where = f"Phoenix {px.base}" + (f", project {destination.project}" if destination.project else "")
        posted = summary.annotations
        line = f"{where}: " + (f"{posted.stored} span annotations stored" if posted else "no diagnoses to annotate")
        if summary.sessions:
            line += f", {summary.sessions} sessions"
        if posted and posted.queued:
            line += (f"; {posted.queued} queued in Phoenix because their spans were not stored within {wait_s:g} s "
                     "(Phoenix retries them for a few minutes)")
        lines.append(line)
    return lines
