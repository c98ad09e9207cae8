"""The metrics half of ``configure()``: a meter provider, its readers, and the span-fed counters.

A process that already has an SDK meter provider keeps it (our instruments report through the
user's pipeline). Otherwise one is created when something would read it: the user's OTLP metrics
pipeline (``OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT``, protocol by ``agentchaos_otel.otlp_exporters``) and/or
a Prometheus ``/metrics`` endpoint (``AGENTCHAOS_PROMETHEUS_PORT`` or ``prometheus_port=``).

Fault and episode counters are fed by a span processor from the attributes our spans carry,
so they count exactly what the trace store records, also for spans of other instrumentations
that carry our fault attributes; wrapper spans (another instrumentation's view of one of our
steps, carrying a mirror of its attributes) are skipped so nothing is counted twice.

Prometheus computes ``increase()`` and ``rate()`` from differences between scraped samples, which
loses counts in two places for a process that runs minutes rather than months: a series whose
first scrape already shows 1 hides that first event, and whatever happened after the last scrape
before exit is never collected. So the endpoint shows every new series at zero for one scrape
before its real value (:class:`ZeroFirstCollector`), and shutting down waits, bounded, until
Prometheus has collected the final values (:meth:`PrometheusEndpoint.linger`). ``diagnose`` and
``report`` publish their counts the same way (:func:`publish_counts`).
"""

from __future__ import annotations

import copy
import inspect
import itertools
import logging
import os
import re
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

from agentchaos_otel import attributes as A
from agentchaos_otel import extras, settings
from agentchaos_otel.trace import metrics as instruments
from agentchaos_otel.trace.kinds import AGENT, span_role

log = logging.getLogger(__name__)

# Seconds shutdown may wait for Prometheus to collect the final values (settings.PROMETHEUS_WAIT).
# Unset: three of the scrape intervals seen so far (at most 60 s; 15 s after a single scrape), and
# no wait at all if nothing ever scraped the endpoint.
MAX_DEFAULT_WAIT_S = 60.0
SINGLE_SCRAPE_WAIT_S = 15.0
# Resource attributes copied onto every series as labels (dashboard variable `service`).
SERIES_RESOURCE_LABELS = frozenset({A.SERVICE_NAME})
_TARGET_INFO = "target"  # the family prometheus_client names target_info, holding the resource

_prometheus_lock = threading.Lock()
_prometheus: dict[str, Any] = {}  # the one endpoint configure() serves in this process


class MetricsSpanProcessor(SpanProcessor):
    """Counts injected faults and ended episodes from the spans as they end."""

    def on_end(self, span: ReadableSpan) -> None:
        try:
            attrs = span.attributes or {}
            if attrs.get(A.STEP_WRAPPED_ATTEMPTS):
                return
            if attrs.get(A.FAULT_INJECTED) is True:
                changed = attrs.get(A.FAULT_CHANGED)
                instruments.record_fault(attrs.get(A.FAULT_TYPE), attrs.get(A.FAULT_TARGET),
                                         changed if isinstance(changed, bool) else None)
            if span.parent is None and span_role(attrs) == AGENT:
                success = attrs.get(A.EPISODE_SUCCESS)
                instruments.record_episode(success if isinstance(success, bool) else None,
                                           attrs.get(A.CONDITION))
        except Exception:  # fail open: metrics never break tracing
            log.debug("metrics processor skipped a span", exc_info=True)


# --- The /metrics endpoint ----------------------------------------------------------------------

def _series_key(family: Any, sample: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    # A histogram's buckets, sum and count are one series to show at zero together.
    return family.name, tuple(sorted((k, v) for k, v in sample.labels.items() if k != "le"))


def _label_name(attribute: str) -> str:
    """A resource attribute's name as a Prometheus label (``service.name`` -> ``service_name``)."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", attribute)


class ZeroFirstCollector:
    """The SDK reader's families as Prometheus scrapes them, each new counter or histogram series
    shown at zero the first time it appears; ``zeroed`` is how many the last collection zeroed.

    ``resource_labels``: resource attributes to copy from ``target_info`` onto every series, for
    exporter releases whose reader cannot do it (``resource_attribute_filter`` came with 0.66b0;
    OpenTelemetry 1.44, which google-adk requires, has 0.65b0).
    """

    def __init__(self, inner: Any, resource_labels: frozenset[str] = frozenset()) -> None:
        self._inner = inner  # a prometheus_client registry holding the SDK reader's collector
        self._seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        self._resource_labels = frozenset(_label_name(a) for a in resource_labels)
        self.zeroed = 0

    def describe(self) -> list[Any]:
        return []  # registering must not count as a scrape

    def _with_resource_labels(self, families: list[Any]) -> list[Any]:
        labels: dict[str, str] = {}
        for family in families:
            if family.name == _TARGET_INFO:
                for sample in family.samples:
                    labels.update((k, v) for k, v in sample.labels.items() if k in self._resource_labels)
        if not labels:
            return families
        out = []
        for family in families:
            if family.name != _TARGET_INFO:
                family = copy.copy(family)
                family.samples = [s._replace(labels={**labels, **s.labels}) for s in family.samples]
            out.append(family)
        return out

    def collect(self) -> Iterator[Any]:
        zeroed = 0
        families = list(self._inner.collect())
        if self._resource_labels:
            families = self._with_resource_labels(families)
        for family in families:
            if family.type not in ("counter", "histogram"):
                yield family
                continue
            fresh = {_series_key(family, s) for s in family.samples} - self._seen
            if fresh:
                family = copy.copy(family)
                family.samples = [s._replace(value=0.0) if _series_key(family, s) in fresh
                                  and not s.name.endswith("_created") else s for s in family.samples]
                self._seen |= fresh
                zeroed += len(fresh)
            yield family
        self.zeroed = zeroed


class _SilentHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return None


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _Delivered:
    """A response body that reports when it has been written out completely."""

    def __init__(self, body: bytes, done: Callable[[], None]) -> None:
        self._body, self._done = body, done

    def __iter__(self) -> Iterator[bytes]:
        yield self._body
        self._done()  # runs once the server has written the body and asks for more

    def close(self) -> None:
        return None


@dataclass
class _Scrape:
    seq: int
    zeroed: int
    at: float


class PrometheusEndpoint:
    """A loopback ``/metrics`` endpoint for one SDK reader, and the record of its scrapes."""

    def __init__(self, port: int, host: str = "127.0.0.1", *, clock: Callable[[], float] = time.monotonic) -> None:
        reader = extras.require("opentelemetry.exporter.prometheus", "a Prometheus endpoint")
        extras.require("prometheus_client", "a Prometheus endpoint")
        from prometheus_client import CollectorRegistry
        from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

        inner = CollectorRegistry(auto_describe=False)
        if "resource_attribute_filter" in inspect.signature(reader.PrometheusMetricReader).parameters:
            self.reader = reader.PrometheusMetricReader(registry=inner,
                                                        resource_attribute_filter=SERIES_RESOURCE_LABELS.__contains__)
            self.collector = ZeroFirstCollector(inner)
        else:  # an older exporter: the series get the resource labels from target_info here
            self.reader = reader.PrometheusMetricReader(registry=inner)
            self.collector = ZeroFirstCollector(inner, resource_labels=SERIES_RESOURCE_LABELS)
        outer = CollectorRegistry(auto_describe=False)
        outer.register(self.collector)
        self._clock = clock
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._scrapes: deque[_Scrape] = deque(maxlen=64)

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            with self._cond:  # one collection at a time, so `zeroed` belongs to this body
                seq = next(self._seq)
                body = generate_latest(outer)
                zeroed = self.collector.zeroed
            start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
            return _Delivered(body, lambda: self._delivered(seq, zeroed))

        try:
            self.server = make_server(host, port, app, server_class=_Server, handler_class=_SilentHandler)
        except OSError as exc:
            raise OSError(f"cannot serve Prometheus metrics on {host}:{port} ({exc.strerror or exc})") from None
        self.host, self.port = host, int(self.server.server_port)
        self._thread = threading.Thread(target=self.server.serve_forever, name="agentchaos-prometheus", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def _delivered(self, seq: int, zeroed: int) -> None:
        with self._cond:
            self._scrapes.append(_Scrape(seq, zeroed, self._clock()))
            self._cond.notify_all()

    @property
    def scrapes(self) -> int:
        with self._cond:
            return len(self._scrapes)

    def default_wait(self) -> float:
        """How long shutdown waits unless told: three scrape intervals seen so far, none if never scraped."""
        with self._cond:
            times = [s.at for s in self._scrapes]
        if not times:
            return 0.0
        if len(times) < 2:  # one scrape: the interval is at least the time since (15 s is common)
            return min(MAX_DEFAULT_WAIT_S, max(SINGLE_SCRAPE_WAIT_S, 2 * (self._clock() - times[0])))
        return min(MAX_DEFAULT_WAIT_S, 3 * statistics.median(b - a for a, b in itertools.pairwise(times)))

    def linger(self, timeout: float) -> bool:
        """Wait until a scrape that began from now on was delivered showing no series at zero.

        Every value recorded before the call is then in Prometheus, including each new series'
        first increment. False when ``timeout`` seconds passed first.
        """
        deadline = self._clock() + timeout
        with self._cond:
            first = next(self._seq)  # scrapes numbered from here on began after the call
            while not any(s.seq > first and s.zeroed == 0 for s in self._scrapes):
                left = deadline - self._clock()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _process_endpoint(port: int, host: str) -> PrometheusEndpoint:
    """The one endpoint configure() serves in this process (a second configure() reuses it)."""
    with _prometheus_lock:
        if "endpoint" not in _prometheus:
            _prometheus["endpoint"] = PrometheusEndpoint(port, host)
        return _prometheus["endpoint"]


def _release_endpoint(endpoint: PrometheusEndpoint) -> None:
    with _prometheus_lock:
        if _prometheus.get("endpoint") is endpoint:
            del _prometheus["endpoint"]
    endpoint.close()


# --- configure() -------------------------------------------------------------------------------

@dataclass
class MetricsHandle:
    provider: Any
    owns_provider: bool
    prometheus_port: int | None = None
    endpoint: PrometheusEndpoint | None = field(default=None, repr=False)

    def shutdown(self) -> None:
        """Flush: wait (bounded) for Prometheus to collect the final values, then stop the pipeline."""
        if self.endpoint is not None:
            wait = settings.PROMETHEUS_WAIT.value()
            wait = self.endpoint.default_wait() if wait is None else wait
            if wait > 0 and not self.endpoint.linger(wait):
                log.warning("Prometheus did not collect the final metrics from %s within %.0f s (%s)",
                            self.endpoint.url, wait, settings.PROMETHEUS_WAIT.name)
        if self.owns_provider:
            self.provider.shutdown()
        if self.endpoint is not None:
            _release_endpoint(self.endpoint)
            self.endpoint = None


def _otlp_wanted(otlp: bool | None) -> bool:
    """Whether ``otlp`` or the OTLP metrics variables ask for metrics over OTLP."""
    from agentchaos_otel.otlp_exporters import otlp_configured

    exporters = os.environ.get("OTEL_METRICS_EXPORTER", "otlp").lower()
    return bool(otlp or (otlp is None and otlp_configured("metrics") and "otlp" in exporters))


def _otlp_reader(otlp: bool | None) -> Any | None:
    if not _otlp_wanted(otlp):
        return None
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    from agentchaos_otel.otlp_exporters import metric_exporter_from_env

    return PeriodicExportingMetricReader(metric_exporter_from_env())


def setup_metrics(*, otlp: bool | None, prometheus_port: int | None, prometheus_host: str | None,
                  resource: Resource | None) -> MetricsHandle | None:
    """Use the process's meter provider, or create one when OTLP or Prometheus would read it."""
    current = metrics.get_meter_provider()
    port = prometheus_port if prometheus_port is not None else settings.PROMETHEUS_PORT.value()
    if isinstance(current, MeterProvider):
        if port is not None:
            log.warning("the process already has a meter provider; add a Prometheus reader to it yourself "
                        "(%s is ignored)", settings.PROMETHEUS_PORT.name)
        return MetricsHandle(current, owns_provider=False)
    readers: list[Any] = []
    reader = _otlp_reader(otlp)
    if reader is not None:
        readers.append(reader)
    endpoint = None
    if port is not None:
        endpoint = _process_endpoint(port, prometheus_host or settings.PROMETHEUS_HOST.value())
        readers.append(endpoint.reader)
    if not readers:
        return None
    provider = MeterProvider(resource=resource or Resource.create(), metric_readers=readers)
    metrics.set_meter_provider(provider)
    return MetricsHandle(provider, owns_provider=True, prometheus_port=endpoint.port if endpoint else None,
                         endpoint=endpoint)


# --- diagnose / report -------------------------------------------------------------------------

@dataclass
class Published:
    """Where counts went: OTLP (pushed at shutdown) and/or a Prometheus endpoint (collected or not)."""

    otlp: bool = False
    pushed: bool | None = None  # None: no OTLP push asked for
    prometheus_url: str | None = None
    collected: bool | None = None  # None: no Prometheus endpoint

    @property
    def failed(self) -> bool:
        """A publication that was asked for and did not happen (the command then exits non-zero)."""
        return self.pushed is False or self.collected is False


def publish_counts(record: Callable[[instruments.Counters], None], *, service_name: str,
                   prometheus_port: int | None, prometheus_host: str | None = None, otlp: bool | None = None,
                   wait_s: float = MAX_DEFAULT_WAIT_S,
                   on_ready: Callable[[str], None] | None = None) -> Published:
    """Record counts on a private meter and hand them to Prometheus and/or OTLP before returning.

    A command like ``diagnose`` lives seconds, not scrape intervals: with a Prometheus port it
    serves ``/metrics`` until Prometheus has collected every series at zero and then at its value
    (at most ``wait_s`` seconds; ``on_ready`` hears the URL first); with the OTLP metrics variables
    (or ``otlp=True``) the counts are pushed when the provider shuts down.
    """
    out = Published()
    readers: list[Any] = []
    held = None
    if _otlp_wanted(otlp):
        # One push, whose result we see: the SDK's periodic reader logs a failed export and goes
        # on, which would leave the command saying it pushed what no endpoint received.
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        held = InMemoryMetricReader()
        readers.append(held)
        out.otlp = True
    endpoint = None
    if prometheus_port is not None:
        endpoint = PrometheusEndpoint(prometheus_port, prometheus_host or settings.PROMETHEUS_HOST.value())
        readers.append(endpoint.reader)
        out.prometheus_url = endpoint.url
    if not readers:
        return out
    provider = MeterProvider(resource=Resource.create({A.SERVICE_NAME: service_name}), metric_readers=readers)
    try:
        record(instruments.create_counters(provider.get_meter(instruments.METER_NAME)))
        if held is not None:
            out.pushed = _push_once(held)
        if endpoint is not None:
            if on_ready is not None:
                on_ready(endpoint.url)
            out.collected = endpoint.linger(wait_s)
    finally:
        provider.shutdown()
        if endpoint is not None:
            endpoint.close()
    return out


def _push_once(reader: Any) -> bool:
    """The counts held by ``reader`` sent to the OTLP metrics endpoint once: whether it took them."""
    from opentelemetry.sdk.metrics.export import MetricExportResult

    from agentchaos_otel.otlp_exporters import metric_exporter_from_env

    exporter = metric_exporter_from_env()
    try:
        data = reader.get_metrics_data()
        return data is None or exporter.export(data) is MetricExportResult.SUCCESS
    except Exception:  # an exporter that raises instead of returning FAILURE
        log.debug("OTLP metrics push failed", exc_info=True)
        return False
    finally:
        exporter.shutdown()


REPORT_SERVICE = "agentchaos-report"
DIAGNOSE_SERVICE = "agentchaos-diagnose"


def publish_corpus(episodes: Iterable[Any], **options: Any) -> Published:
    """``report --metrics-port/--metrics-otlp``: the episode and fault counts of a trace file."""
    return publish_counts(lambda c: instruments.record_corpus(episodes, c), service_name=REPORT_SERVICE, **options)


def publish_diagnoses(verdicts: Iterable[tuple[str, str]], **options: Any) -> Published:
    """``diagnose --metrics-port/--metrics-otlp``: diagnoses by (fault type, method)."""
    pairs = list(verdicts)
    return publish_counts(lambda c: instruments.record_diagnoses(pairs, c), service_name=DIAGNOSE_SERVICE, **options)


def describe(published: Published, wait_s: float) -> str:
    """One line for the user: where the counts went, or that Prometheus never collected them."""
    parts = []
    if published.prometheus_url is not None:
        parts.append(f"metrics collected by Prometheus from {published.prometheus_url}" if published.collected
                     else f"metrics NOT collected: nothing scraped {published.prometheus_url} twice within "
                          f"{wait_s:g} s (add it to Prometheus's scrape targets, or raise --metrics-wait)")
    if published.otlp:
        parts.append("metrics pushed to the OTLP metrics endpoint" if published.pushed
                     else "metrics NOT pushed: the OTLP metrics endpoint did not take them (is a collector "
                          "listening at OTEL_EXPORTER_OTLP_METRICS_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT?)")
    return "; ".join(parts)
