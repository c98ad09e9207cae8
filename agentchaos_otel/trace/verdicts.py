"""Diagnoses and predictions as span attributes and events, the way trace viewers can show them.

One place decides how a verdict looks on a span, for the replaying exporter (``traces export``)
and for the live diagnosis of ``configure(diagnose_live=True)``: the blamed span gets an
``agentchaos.diagnosis`` event and ``agentchaos.diagnosis.*`` attributes (type, confidence,
method, evidence, target, rule); the episode root gets the same attributes plus the blamed span
and step, so one search on root spans lists every diagnosed root cause. A failed root's status
message starts with the verdict in one line (:func:`verdict_line`), because trace lists (Jaeger's,
Tempo's, Phoenix's "error" column) show a status message, cut short, where they show no attribute.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentchaos_otel import attributes as A

# When several methods diagnosed one episode, the attributes (one value per key) come from the
# first method in this order; every diagnosis still gets its own event.
METHOD_ORDER = ("rule", "learned", "llm", "text")

# Trace lists show the start of a status message only, so the verdict comes first and is kept short.
STATUS_MAX = 400
_STEP_PREFIX = re.compile(r"^step \d+ `[^`]*`: ")


def method_rank(method: str | None) -> int:
    return METHOD_ORDER.index(method) if method in METHOD_ORDER else len(METHOD_ORDER)


def diagnosis_attributes(d: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes of one diagnosis (a ``diagnoses`` table row or ``Diagnosis.to_dict()``)."""
    attrs: dict[str, Any] = {
        A.DIAGNOSIS_TYPE: str(d.get("fault_type")),
        A.DIAGNOSIS_CONFIDENCE: round(float(d.get("confidence") or 0.0), 4),
        A.DIAGNOSIS_METHOD: str(d.get("method")),
        A.DIAGNOSIS_EVIDENCE: str(d.get("evidence") or "")[:1000],
    }
    for key, field in ((A.DIAGNOSIS_TARGET, "target"), (A.DIAGNOSIS_RULE, "rule")):
        if d.get(field) is not None:
            attrs[key] = str(d[field])
    return attrs


def root_summary(d: Mapping[str, Any]) -> dict[str, Any]:
    """What the episode root says about the diagnosis: the verdict plus where it points."""
    attrs = diagnosis_attributes(d)
    if d.get("span_id"):
        attrs[A.DIAGNOSIS_SPAN_ID] = str(d["span_id"])
    if d.get("step") is not None:
        attrs[A.DIAGNOSIS_STEP] = int(d["step"])
    return attrs


def verdict_line(d: Mapping[str, Any]) -> str:
    """The verdict in one line, for a root's status message: ``truncate at step 2: finish_reason=length, ...``.

    The evidence's own ``step N `span name`: `` opening is dropped when the line already names the step.
    """
    evidence = " ".join(str(d.get("evidence") or "").split())
    head = str(d.get("fault_type"))
    if d.get("step") is not None:
        head = f"{head} at step {int(d['step'])}"
        evidence = _STEP_PREFIX.sub("", evidence, count=1)
    line = f"{head}: {evidence}" if evidence else head
    return line if len(line) <= STATUS_MAX else line[: STATUS_MAX - 1] + "…"


def root_status(d: Mapping[str, Any], stored: str | None) -> str:
    """A failed root's status message with the verdict in front of what it said before.

    A message that already leads with this verdict (a root diagnosed live, exported again) is
    kept as it is rather than given the verdict twice.
    """
    line = verdict_line(d)
    if stored and (stored == line or stored.startswith(f"{line}; ")):
        return stored
    return f"{line}; {stored}" if stored else line


def event_attributes(d: Mapping[str, Any]) -> dict[str, Any]:
    """The ``agentchaos.diagnosis`` event carries the whole verdict, so each method's stays visible."""
    return root_summary(d)


def prediction_attributes(p: Mapping[str, Any]) -> dict[str, Any]:
    """One step's failure score, with the live predictor's attribute names."""
    attrs: dict[str, Any] = {A.PREDICTOR_SCORE: round(float(p["score"]), 6), A.PREDICTOR_ALARM: bool(p["alarm"])}
    if p.get("threshold") is not None:
        attrs[A.PREDICTOR_THRESHOLD] = float(p["threshold"])
    if p.get("model"):
        attrs[A.PREDICTOR_MODEL] = str(p["model"])
    if p.get("feature_set"):
        attrs[A.PREDICTOR_FEATURE_SET] = str(p["feature_set"])
    return attrs
