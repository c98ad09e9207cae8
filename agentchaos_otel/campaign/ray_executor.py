"""Campaign episodes fanned out over Ray actors against one shared model endpoint.

Each actor is a process with its own tracing (the same ``configure`` pipeline a local campaign
uses: episode processor, injector, tool-result injector) whose spans are collected as ``spans``
rows in memory instead of being written. After each batch of episodes the actor hands the rows
back, and the driver, the one writer, stores them in the campaign's trace file through the
DuckDB exporter (spool, redaction and dedup included). So the file has the same semantics as a
local run: resuming reads finished episodes from it, ``campaign_runs`` records the invocation,
and an interrupted campaign keeps every batch that came back.

The model endpoint is whatever ``campaign run`` resolved (``--base-url``, or the simulated model
served by the driver on loopback, which only a local Ray instance can reach). With a real
endpoint each actor reads the API key from its own environment (``--api-key-env``): the key is
never sent through Ray.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from rich.console import Console

from agentchaos_otel.campaign.agents import AgentOptions, load_agent
from agentchaos_otel.campaign.runner import (
    CampaignConfig,
    CampaignResult,
    CampaignRunner,
    EpisodeResult,
    EpisodeSpec,
    expand,
    finished_episodes,
    new_run_id,
    record_run_end,
    record_run_start,
)
from agentchaos_otel.errors import UserError

BATCH_EPISODES = 2  # episodes per actor call: small, so rows reach the file soon after each finishes


class RowCollector(SpanExporter):
    """Spans as ``spans`` rows in memory, until the driver takes them."""

    def __init__(self) -> None:
        self._rows: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from agentchaos_otel.store.exporter import span_to_row

        now = time.time_ns()
        rows = [span_to_row(s, now) for s in spans]
        with self._lock:
            self._rows.extend(rows)
        return SpanExportResult.SUCCESS

    def drain(self) -> list[dict[str, Any]]:
        with self._lock:
            rows, self._rows = self._rows, []
        return rows


@dataclass(frozen=True)
class WorkerSpec:
    """Everything an actor needs to rebuild the agent and reach the model (no credentials)."""

    agent: str
    tasks: str
    seed: int
    conditions: tuple[str, ...]
    options: AgentOptions
    base_url: str
    model: str
    simulated: bool
    api_key_env: str
    threads: int = 1


class CampaignWorker:
    """One Ray actor: a configured process running batches of episodes and returning their rows."""

    def __init__(self, spec: WorkerSpec) -> None:
        import openai

        import agentchaos_otel

        self.spec = spec
        setup = load_agent(spec.agent)(spec.tasks, spec.seed, list(spec.conditions), spec.options)
        key = "sk-simulated" if spec.simulated else os.environ.get(spec.api_key_env)
        if not key:
            raise UserError(f"environment variable {spec.api_key_env} is not set on this Ray worker")
        self.collector = RowCollector()
        resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "agentchaos-agent"})
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(SimpleSpanProcessor(self.collector))
        # Global, as ``configure`` makes it in a local campaign: the tool injector and the agents
        # trace through the global provider.
        trace.set_tracer_provider(self.provider)
        self.handle = agentchaos_otel.configure(db=None, plan="none", seed=spec.seed,  # plans per episode
                                                tracer_provider=self.provider)
        client = openai.OpenAI(base_url=spec.base_url, api_key=key, max_retries=2, timeout=120.0)
        self.runner = CampaignRunner(setup.make_run_one(client, spec.model), workers=spec.threads,
                                     simulated=spec.simulated, tracer_provider=self.provider, progress=False,
                                     opens_episode=setup.opens_episode)

    def run_batch(self, specs: list[EpisodeSpec]) -> tuple[list[EpisodeResult], list[dict[str, Any]]]:
        result = self.runner.run(specs)
        self.provider.force_flush()
        return result.results, self.collector.drain()

    def pid(self) -> int:
        return os.getpid()


def run_campaign_ray(config: CampaignConfig, worker: WorkerSpec, *, ray_address: str | None = None,
                     ray_workers: int | None = None, console: Console | None = None,
                     progress: bool = True, timings: dict[str, float] | None = None) -> CampaignResult:
    """``run_campaign`` with episodes on Ray actors and this process as the trace file's writer.

    ``timings`` (if given) receives ``actors_s`` (until every actor is constructed) and
    ``episodes_s`` (from then until the last batch is stored).
    """
    from agentchaos_otel.parallel.ray_session import RayUnavailable, cluster_cpus, ray_session
    from agentchaos_otel.store.exporter import DuckDBSpanExporter

    console = console or Console(stderr=True)
    specs = expand(config.agent, config.tasks, config.conditions, config.seeds)
    skip = finished_episodes(config.db, simulated=config.simulated)
    todo = [s for s in specs if s.key not in skip]
    result = CampaignResult(None, len(specs), len(specs) - len(todo))
    started = datetime.now(UTC)
    run_id = new_run_id(started)
    args = {**config.args(), "executor": "ray", "ray_address": ray_address, "ray_workers": ray_workers}
    record_run_start(config.db, run_id, started, args, config.simulated)
    exporter = DuckDBSpanExporter(str(config.db))
    status = "interrupted"
    t0 = time.monotonic()
    try:
        with ray_session(ray_address, num_cpus=ray_workers) as ray:
            n = ray_workers or cluster_cpus(ray)
            actor_cls = ray.remote(num_cpus=1)(CampaignWorker)
            actors = [actor_cls.remote(worker) for _ in range(max(1, min(n, len(todo) or 1)))]
            try:  # every actor constructed (agent built, tracing configured) before episodes start
                ray.get([a.pid.remote() for a in actors])
            except Exception as exc:
                raise RayUnavailable(f"Ray workers could not start: {' '.join(str(exc).split())[-300:]}") from None
            t_ready = time.monotonic()
            batches = [todo[i:i + BATCH_EPISODES] for i in range(0, len(todo), BATCH_EPISODES)]
            pending: dict[Any, Any] = {}
            free = list(actors)
            done = 0
            while batches or pending:
                while free and batches:
                    actor = free.pop()
                    pending[actor.run_batch.remote(batches.pop(0))] = actor
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    free.append(pending.pop(ref))
                    results, rows = ray.get(ref)
                    if rows and exporter.export_rows(rows) is not SpanExportResult.SUCCESS:
                        raise OSError(f"{config.db}: spans of {len(results)} episodes could not be stored")
                    result.results.extend(results)
                    done += len(results)
                    if progress:
                        console.print(f"episodes {done}/{len(todo)}", end="\r")
            if timings is not None:
                timings.update(actors_s=t_ready - t0, episodes_s=time.monotonic() - t_ready)
        status = "finished"
    finally:
        exporter.shutdown()
        counts = result.counts if status == "finished" else {"planned": len(specs)}
        counts["seconds"] = int(time.monotonic() - t0)
        record_run_end(config.db, run_id, started, datetime.now(UTC), args, counts, config.simulated, status)
    result.run_id = run_id
    return result
