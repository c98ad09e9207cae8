"""Campaigns: tasks x conditions x seeds, run in parallel, resumable, one crash never stops it.

The runner knows nothing about any particular agent: it is given episode specs and a
``run_one(spec)`` callable. It opens the episode (root span, plan, seed, condition, simulated
label) around each call, so every agent gets the same bookkeeping and a crash is recorded on the
episode's own root span as that episode's error. Workers are threads: agents are I/O-bound
against a model server, and the per-task binding lives in ``contextvars``, which a new thread
starts empty, so concurrent episodes cannot see each other's plan or step numbers.

Resuming reads which (agent, task, condition, seed) episodes already have an outcome in the
trace file; re-running the same command after an interruption runs only the missing ones.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opentelemetry import trace
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from agentchaos_otel import attributes as A

CLEAN = "none"
EpisodeKey = tuple[str, str, str, int]  # (agent, task, condition, seed)


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode of a campaign: which agent runs which task under which condition and seed."""

    agent: str
    task_id: str
    condition: str
    seed: int

    @property
    def key(self) -> EpisodeKey:
        return (self.agent, self.task_id, self.condition, self.seed)

    @property
    def plan(self) -> str | None:
        """The plan the episode binds: tool conditions and catalog names both resolve by name.

        A guarded condition (``<condition>+guarded``) binds its base condition's plan."""
        from agentchaos_otel.campaign.guarded import split_label

        base, _ = split_label(self.condition)
        return None if base == CLEAN else base


@dataclass(frozen=True)
class EpisodeOutcome:
    success: bool | None
    error: str | None = None


@dataclass(frozen=True)
class EpisodeResult:
    spec: EpisodeSpec
    success: bool | None
    error: str | None
    crashed: bool
    trace_id: str | None


RunOne = Callable[[EpisodeSpec], "EpisodeOutcome | bool | None"]


def expand(agent: str, tasks: Sequence[str], conditions: Sequence[str],
           seeds: Sequence[int]) -> list[EpisodeSpec]:
    """Every combination, ordered seed-major then task so the clean and faulted episodes of one
    (task, seed) run close together and an interrupted campaign leaves complete pairs behind."""
    return [EpisodeSpec(agent, t, c, s) for s, t, c in itertools.product(seeds, tasks, conditions)]


def _normalise(result: Any) -> EpisodeOutcome:
    if isinstance(result, EpisodeOutcome):
        return result
    if result is None or isinstance(result, bool):
        return EpisodeOutcome(result)
    success = getattr(result, "success", None)
    error = getattr(result, "error", None)
    if isinstance(result, dict):
        success, error = result.get("success"), result.get("error")
    return EpisodeOutcome(None if success is None else bool(success), None if error is None else str(error))


# --- The trace file: what is finished, and the campaign_runs table ------------------------------

def finished_episodes(db: str | Path, *, simulated: bool | None = None) -> set[EpisodeKey]:
    """Episodes with a recorded outcome (success or error), read from their root spans.

    Read from the raw ``spans`` table with the names of ``attributes.py`` (which the
    ``episodes`` view derives from too), and from the rows waiting in the store's spool (a file
    locked during the last run leaves them there, and this run's first write loads them: run
    again, they would be counted twice). Only root spans that were stored or spooled count: an
    episode whose spans were lost in a kill is run again. A missing or empty file has nothing.
    With ``simulated`` given, only episodes with that label count: a run against a real model
    must not skip tasks because the simulated model already did them in the same file.
    """
    from agentchaos_otel.store.database.connect import StoreError, open_store

    path = Path(db)
    out = _spooled_finished(path, simulated)
    if not path.exists():
        return out

    def attr(key: str) -> str:
        return f"json_extract_string(attributes, '$.\"{key}\"')"

    try:
        with open_store(path) as con:
            rows = con.execute(
                f"SELECT {attr(A.GEN_AI_AGENT_NAME)}, {attr(A.TASK_ID)}, {attr(A.CONDITION)}, {attr(A.SEED)} "
                f"FROM spans WHERE {attr(A.GEN_AI_OPERATION_NAME)} = ? "
                f"AND ({attr(A.EPISODE_SUCCESS)} IS NOT NULL OR {attr(A.EPISODE_ERROR)} IS NOT NULL)"
                + ("" if simulated is None else f" AND COALESCE({attr(A.SIMULATED)} = 'true', FALSE) = ?"),
                [A.OP_INVOKE_AGENT] + ([] if simulated is None else [simulated])).fetchall()
    except StoreError as exc:
        if "empty database" in str(exc):
            return out
        raise
    for agent, task, cond, seed in rows:
        if task is None or seed is None:
            continue
        out.add((agent or "", task, cond or CLEAN, int(seed)))
    return out


def _spooled_finished(path: Path, simulated: bool | None) -> set[EpisodeKey]:
    """``finished_episodes`` of the root spans waiting in the spool."""
    from agentchaos_otel.store.read.spooled import spooled_rows

    out: set[EpisodeKey] = set()
    for row in spooled_rows(path, needle=A.OP_INVOKE_AGENT):
        try:
            attrs = json.loads(row.get("attributes") or "{}")
        except (TypeError, ValueError):
            continue
        if not isinstance(attrs, dict) or attrs.get(A.GEN_AI_OPERATION_NAME) != A.OP_INVOKE_AGENT:
            continue
        if attrs.get(A.EPISODE_SUCCESS) is None and attrs.get(A.EPISODE_ERROR) is None:
            continue
        if simulated is not None and (attrs.get(A.SIMULATED) is True) != simulated:
            continue
        task, seed = attrs.get(A.TASK_ID), attrs.get(A.SEED)
        if task is None or seed is None:
            continue
        out.add((str(attrs.get(A.GEN_AI_AGENT_NAME) or ""), str(task), str(attrs.get(A.CONDITION) or CLEAN),
                 int(seed)))
    return out


_run_counter = itertools.count()


def new_run_id(now: datetime) -> str:
    return f"run-{now:%Y%m%dT%H%M%S}-{os.getpid()}-{next(_run_counter)}"


def _write_run(db: Path, row: dict[str, Any]) -> None:
    from agentchaos_otel.redact import redact_json_text
    from agentchaos_otel.store.database.connect import write_rows
    from agentchaos_otel.store.database.schema import CAMPAIGN_RUNS_DDL

    db.parent.mkdir(parents=True, exist_ok=True)
    row = {**row, "args": redact_json_text(row["args"])}  # e.g. a --base-url carrying ?key=
    write_rows(str(db), "campaign_runs", [row], CAMPAIGN_RUNS_DDL, key=["id"])


def record_run_start(db: Path, run_id: str, started: datetime, args: dict[str, Any], simulated: bool) -> None:
    _write_run(db, {"id": run_id, "started": started.replace(tzinfo=None), "finished": None,
                    "args": json.dumps(args, default=str), "counts": None, "simulated": simulated,
                    "status": "running"})


def record_run_end(db: Path, run_id: str, started: datetime, finished: datetime, args: dict[str, Any],
                   counts: dict[str, int], simulated: bool, status: str) -> None:
    _write_run(db, {"id": run_id, "started": started.replace(tzinfo=None),
                    "finished": finished.replace(tzinfo=None),
                    "args": json.dumps(args,
                                       default=str), "counts": json.dumps(counts), "simulated": simulated,
                    "status": status})


def campaign_runs(db: str | Path) -> list[dict[str, Any]]:
    """Every recorded invocation, oldest first, with args and counts decoded."""
    from agentchaos_otel.store.database.connect import StoreError, open_store

    path = Path(db)
    if not path.exists():
        return []
    try:
        with open_store(path) as con:
            tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables")
                      .fetchall()}
            if "campaign_runs" not in tables:
                return []
            cur = con.execute("SELECT * FROM campaign_runs ORDER BY started, id")
            cols = [d[0] for d in cur.description]
            rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    except StoreError as exc:
        if "empty database" in str(exc):
            return []
        raise
    for r in rows:
        for k in ("args", "counts"):
            if isinstance(r.get(k), str):
                r[k] = json.loads(r[k])
    return rows


# --- Running -----------------------------------------------------------------------------------

@dataclass
class CampaignResult:
    run_id: str | None
    planned: int
    skipped: int
    results: list[EpisodeResult] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return {
            "planned": self.planned, "skipped_finished": self.skipped, "ran": len(self.results),
            "succeeded": sum(r.success is True for r in self.results),
            "failed": sum(r.success is False and not r.crashed for r in self.results),
            "unscored": sum(r.success is None and not r.crashed for r in self.results),
            "crashed": sum(r.crashed for r in self.results),
        }


class CampaignRunner:
    """Runs episode specs through ``run_one`` inside an episode context each, on N threads."""

    def __init__(self, run_one: RunOne, *, workers: int = 1, simulated: bool = False,
                 tracer_provider: trace.TracerProvider | None = None, console: Console | None = None,
                 progress: bool = True, opens_episode: bool = False) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.run_one = run_one
        self.workers = workers
        self.simulated = simulated
        self.tracer_provider = tracer_provider
        self.console = console or Console(stderr=True)
        self.progress = progress
        self.opens_episode = opens_episode
        self._stop = threading.Event()

    def stop(self) -> None:
        """Finish the episodes already running and start no new ones."""
        self._stop.set()

    def _episode(self, spec: EpisodeSpec) -> Any:
        from agentchaos_otel.episode_scope import Episode

        return Episode(spec.task_id, spec.plan, spec.seed, condition=spec.condition, agent_name=spec.agent,
                       simulated=self.simulated, tracer_provider=self.tracer_provider)

    def run_episode(self, spec: EpisodeSpec) -> EpisodeResult:
        """One episode; never raises, whatever the agent (or a broken plan) does.

        Agents whose ``run_one`` opens its own episode (``opens_episode``) are called bare; if
        one crashes before recording an outcome, an episode carrying only the error is written
        so the crash is in the store under its task, condition and seed.
        """
        try:
            return self._run_episode(spec)
        except Exception as exc:  # e.g. the episode itself could not be opened: nothing to record on
            return EpisodeResult(spec, False, f"{type(exc).__name__}: {exc}", True, None)

    def _run_episode(self, spec: EpisodeSpec) -> EpisodeResult:
        if self.opens_episode:
            try:
                outcome = _normalise(self.run_one(spec))
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                ep = self._episode(spec)
                with ep:
                    ep.set_outcome(False, error)
                    _mark_crashed(ep)
                return EpisodeResult(spec, False, error, True, _trace_id(ep))
            return EpisodeResult(spec, outcome.success, outcome.error, False, None)
        ep = self._episode(spec)
        try:
            with ep:
                try:
                    outcome = _normalise(self.run_one(spec))
                except Exception:
                    _mark_crashed(ep)
                    raise
                if outcome.success is not None:
                    ep.set_outcome(outcome.success, outcome.error)
                elif outcome.error is not None:
                    ep.error = outcome.error
        except Exception as exc:  # recorded on the root span by the episode's __exit__
            return EpisodeResult(spec, False, f"{type(exc).__name__}: {exc}", True, _trace_id(ep))
        return EpisodeResult(spec, ep.success, ep.error, False, _trace_id(ep))

    def run(self, specs: Sequence[EpisodeSpec], *, skip: Iterable[EpisodeKey] = ()) -> CampaignResult:
        done = set(skip)
        todo = [s for s in specs if s.key not in done]
        result = CampaignResult(None, len(specs), len(specs) - len(todo))
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("ok {task.fields[ok]} fail {task.fields[fail]} crash {task.fields[crash]}"),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=self.console, disable=not self.progress) as bar:
            task = bar.add_task("episodes", total=len(todo), ok=0, fail=0, crash=0)
            pending: set[Future[EpisodeResult]] = set()
            tally = {"ok": 0, "fail": 0, "crash": 0}
            queue = iter(todo)
            with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="campaign") as pool:
                while True:
                    while len(pending) < self.workers and not self._stop.is_set():
                        spec = next(queue, None)
                        if spec is None:
                            break
                        pending.add(pool.submit(self.run_episode, spec))
                    if not pending:
                        break
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        r = fut.result()
                        result.results.append(r)
                        tally["crash" if r.crashed else "ok" if r.success else "fail"] += 1
                        bar.update(task, advance=1, **tally)
        return result


def _mark_crashed(ep: Any) -> None:
    span = getattr(ep, "span", None)
    if span is not None:
        span.set_attribute(A.EPISODE_CRASHED, True)


def _trace_id(ep: Any) -> str | None:
    span = getattr(ep, "span", None)
    return None if span is None else format(span.get_span_context().trace_id, "032x")


# --- A whole campaign invocation -----------------------------------------------------------------

@dataclass
class CampaignConfig:
    agent: str
    tasks: list[str]
    conditions: list[str]
    seeds: list[int]
    workers: int = 1
    db: Path = Path("traces.duckdb")
    simulated: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def args(self) -> dict[str, Any]:
        d = asdict(self)
        d["db"] = str(self.db)
        d["tasks"] = self.tasks if len(self.tasks) <= 50 else {"count": len(self.tasks)}
        return d


def run_campaign(config: CampaignConfig, run_one: RunOne, *,
                 tracer_provider: trace.TracerProvider | None = None,
                 console: Console | None = None, progress: bool = True, opens_episode: bool = False,
                 flush: Callable[[], Any] | None = None) -> CampaignResult:
    """Record the invocation, skip finished episodes, run the rest, record the counts.

    ``flush`` is called before the final counts are written so the spans of this run are in the
    file when ``campaign_runs`` says the run finished.
    """
    specs = expand(config.agent, config.tasks, config.conditions, config.seeds)
    skip = finished_episodes(config.db, simulated=config.simulated)
    started = datetime.now(UTC)
    run_id = new_run_id(started)
    record_run_start(config.db, run_id, started, config.args(), config.simulated)
    runner = CampaignRunner(run_one, workers=config.workers, simulated=config.simulated,
                            tracer_provider=tracer_provider, console=console, progress=progress,
                            opens_episode=opens_episode)
    status = "interrupted"
    t0 = time.monotonic()
    try:
        result = runner.run(specs, skip=skip)
        status = "finished"
    finally:
        if flush is not None:
            flush()
        counts = result.counts if status == "finished" else {"planned": len(specs)}
        counts["seconds"] = int(time.monotonic() - t0)
        record_run_end(config.db, run_id, started, datetime.now(UTC), config.args(), counts, config.simulated,
                       status)
    result.run_id = run_id
    return result
