"""Phoenix (Arize) through its REST API: is this endpoint Phoenix, and diagnoses as span annotations.

Phoenix shows span attributes only inside a span's detail view; what its trace and span lists
show is the status message (the "error" column) and *span annotations* (one chip per annotation
name, with the mean score). So a diagnosis goes to Phoenix twice: in the episode root's status
message (``agentchaos traces export`` does that for every backend) and as annotations:

- one on the blamed span and one on the episode root, per diagnosis method;
- annotation name ``<method> diagnosis`` (one chip per method: Phoenix averages the scores of
  annotations sharing a name, so methods never share one), label = fault type, score =
  confidence, explanation = evidence, annotator kind ``LLM`` for the LLM diagnoser and ``CODE``
  for the others;
- identifier ``agentchaos:<method>:blamed`` / ``agentchaos:<method>:root``: Phoenix updates an
  annotation with the same (name, span, identifier) in place, so exporting again replaces the
  verdict instead of adding a copy.

Phoenix inserts OTLP spans in the background, and ``POST /v1/span_annotations?sync=true``
refuses the whole request (404 naming the span ids) while any of its spans is missing. Posting
therefore waits, bounded: the spans Phoenix named are retried until they exist or the wait is
over; the rest are then handed to Phoenix's own queue (``sync=false``, which it retries for
several minutes) and counted as queued. Only ``httpx`` (a core dependency) is used; every
failure is one line (:class:`PhoenixError`), never a traceback.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse, urlunparse

import httpx

VERSION_PATH = "/arize_phoenix_version"
ANNOTATIONS_PATH = "/v1/span_annotations"
API_KEY_ENV = "PHOENIX_API_KEY"
CHUNK = 500  # annotations per request
DEFAULT_WAIT_S = 60.0

_SPAN_ID = re.compile(r"\b[0-9a-f]{16}\b")
_VERSION = re.compile(r"\d+\.\d+[\w.+-]*")


class PhoenixError(ValueError):
    """Phoenix could not be reached or refused a request; the message is one line for the user."""


def base_url(endpoint: str) -> str:
    """Phoenix's web address from its OTLP/HTTP endpoint (``http://host:6006/v1/traces`` -> ``http://host:6006``)."""
    parsed = urlparse(endpoint.strip())
    if not parsed.scheme or not parsed.netloc:
        raise PhoenixError(f"{endpoint!r} is not a URL (expected http://host:port)")
    path = parsed.path.rstrip("/")
    if path.endswith("/v1/traces"):
        path = path[: -len("/v1/traces")]
    return urlunparse((parsed.scheme, parsed.netloc, path, "", "", ""))


def rest_headers(headers: Mapping[str, str] | None = None) -> dict[str, str]:
    """Headers for the REST API: the ones given, plus ``PHOENIX_API_KEY`` as a bearer token if set."""
    out = dict(headers or {})
    key = os.environ.get(API_KEY_ENV, "").strip()
    if key and not any(k.lower() == "authorization" for k in out):
        out["authorization"] = f"Bearer {key}"
    return out


def annotation_name(method: str) -> str:
    return f"{method} diagnosis"


def annotator_kind(method: str) -> str:
    return "LLM" if method == "llm" else "CODE"


def annotations(diagnoses: Mapping[str, Sequence[Mapping[str, Any]]],
                roots: Mapping[str, str]) -> list[dict[str, Any]]:
    """Span annotations of every diagnosis: on the blamed span (if it names one) and on the episode root."""
    out: list[dict[str, Any]] = []
    for trace_id, rows in diagnoses.items():
        for d in rows:
            method = str(d.get("method") or "unknown")
            result = {"label": str(d.get("fault_type")), "score": round(float(d.get("confidence") or 0.0), 4),
                      "explanation": str(d.get("evidence") or "")}
            meta = {"source": "agentchaos", "method": method, "trace_id": trace_id,
                    "step": None if d.get("step") is None else int(d["step"]),
                    "blamed_span_id": d.get("span_id"), "target": d.get("target"), "rule": d.get("rule")}
            targets = [("blamed", d.get("span_id")), ("root", roots.get(trace_id))]
            for role, span_id in targets:
                if span_id:
                    out.append({"span_id": str(span_id), "name": annotation_name(method),
                                "annotator_kind": annotator_kind(method), "result": result,
                                "metadata": {**meta, "role": role}, "identifier": f"agentchaos:{method}:{role}"})
    return out


@dataclass
class Posted:
    """What became of the annotations: stored now, or left to Phoenix's retry queue."""

    stored: int = 0
    queued: int = 0
    waited_s: float = 0.0


def _one_line(response: httpx.Response) -> str:
    body = " ".join(response.text.split())[:200]
    return f"HTTP {response.status_code}" + (f": {body}" if body else "")


class PhoenixClient:
    """The few REST calls we make, on one connection pool; use as a context manager."""

    def __init__(self, base: str, *, headers: Mapping[str, str] | None = None, timeout: float = 30.0,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.base = base.rstrip("/")
        self._http = httpx.Client(base_url=self.base, headers=rest_headers(headers), timeout=timeout)
        self._clock, self._sleep = clock, sleep

    def __enter__(self) -> PhoenixClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            reason = str(exc).strip() or type(exc).__name__
            raise PhoenixError(f"Phoenix at {self.base} is not reachable ({reason[:160]})") from None

    def version(self, timeout: float = 5.0) -> str | None:
        """Phoenix's version, or None when the server answers but is not Phoenix."""
        r = self._request("GET", VERSION_PATH, timeout=timeout)
        text = r.text.strip().strip('"')
        return text if r.status_code == 200 and _VERSION.fullmatch(text) else None

    def post_annotations(self, items: Sequence[Mapping[str, Any]], *, wait_s: float = DEFAULT_WAIT_S) -> Posted:
        """Store span annotations once their spans exist, waiting at most ``wait_s`` seconds for them."""
        posted = Posted()
        start = self._clock()
        pending = [dict(a) for a in items]
        delay = 0.25
        while pending:
            missing: list[dict[str, Any]] = []
            for i in range(0, len(pending), CHUNK):
                stored, absent = self._post_present(pending[i:i + CHUNK])
                posted.stored += stored
                missing.extend(absent)
            pending = missing
            if not pending:
                break
            left = wait_s - (self._clock() - start)
            if left <= 0:
                for i in range(0, len(pending), CHUNK):
                    r = self._request("POST", ANNOTATIONS_PATH, params={"sync": "false"},
                                      json={"data": pending[i:i + CHUNK]})
                    if r.status_code != 200:
                        raise PhoenixError(f"Phoenix refused span annotations ({_one_line(r)})")
                posted.queued = len(pending)
                break
            self._sleep(min(delay, left))
            delay = min(2 * delay, 2.0)
        posted.waited_s = self._clock() - start
        return posted

    def _post_present(self, chunk: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
        """Post a chunk; the annotations whose spans Phoenix does not have yet come back unposted."""
        while chunk:
            r = self._request("POST", ANNOTATIONS_PATH, params={"sync": "true"}, json={"data": chunk})
            if r.status_code == 200:
                return len(chunk), []
            absent_ids = set(_SPAN_ID.findall(r.text)) if r.status_code == 404 else set()
            absent = [a for a in chunk if a["span_id"] in absent_ids]
            if not absent:
                raise PhoenixError(f"Phoenix refused span annotations ({_one_line(r)})")
            present = [a for a in chunk if a["span_id"] not in absent_ids]
            if not present:
                return 0, absent
            stored, more = self._post_present(present)
            return stored, absent + more
        return 0, []

    # --- reading back (checks, screenshots) ------------------------------------------------------

    def _json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        r = self._request("GET", path, params=params)
        if r.status_code != 200:
            raise PhoenixError(f"GET {path} failed ({_one_line(r)})")
        return r.json()

    def _pages(self, path: str, params: Mapping[str, Any]) -> Iterable[dict[str, Any]]:
        cursor = None
        while True:
            page = self._json(path, {**params, **({"cursor": cursor} if cursor else {})})
            yield from page.get("data") or []
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def projects(self) -> dict[str, str]:
        """Project name -> Phoenix's id for it (its pages are addressed by id)."""
        return {p["name"]: p["id"] for p in self._pages("/v1/projects", {"limit": 100})}

    def spans(self, project: str, **filters: Any) -> list[dict[str, Any]]:
        """Every span of a project (``project`` is a name or an id), optionally filtered by span_id etc."""
        ident = self.projects().get(project, project)
        return list(self._pages(f"/v1/projects/{ident}/spans", {"limit": 1000, **filters}))

    def span_annotations(self, project: str, span_ids: Sequence[str]) -> list[dict[str, Any]]:
        ident = self.projects().get(project, project)
        out: list[dict[str, Any]] = []
        for i in range(0, len(span_ids), 100):
            out.extend(self._pages(f"/v1/projects/{ident}/span_annotations",
                                   {"span_ids": list(span_ids[i:i + 100]), "limit": 1000}))
        return out

    def sessions(self, project: str) -> list[dict[str, Any]]:
        ident = self.projects().get(project, project)
        return list(self._pages(f"/v1/projects/{ident}/sessions", {"limit": 100}))
