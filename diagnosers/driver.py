"""Diagnosing a whole trace store chunk by chunk, in this process or mapped over Ray workers.

Episodes are streamed from the store in chunks of whole traces (``store/episodes.py``), so
memory holds one chunk of episodes plus the diagnoses, never the whole store. Each chunk goes
through ``diagnose_episodes`` exactly as a fully loaded store would, and the diagnoses are put
back in the whole-store episode order at the end, so the result does not depend on chunking or
on the executor. Episodes are loaded blind (ground truth dropped as they are parsed, which is
cheaper than copying them blind afterwards); ``diagnose_episodes`` blinds them again regardless,
and the outcome and ``agentchaos.simulated`` the driver reads are not ground truth. With
``executor="ray"`` each worker loads and diagnoses its own chunks from the same path (a file or
Parquet dataset every node can read) and returns only the diagnoses.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.errors import no_such_file
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.store.database.connect import StoreError
from agentchaos_otel.store.read.chunks import DEFAULT_CHUNK_SPANS
from agentchaos_otel.store.read.episodes import iter_keyed_chunks
from agentchaos_otel.store.read.fanout import map_processes, map_ray, trace_groups
from diagnosers.base import CONFIDENCE_MIN, Diagnoser, Diagnosis, diagnose_episodes
from diagnosers.tracefile import DiagnoseError, where_clause

EXECUTORS = ("local", "ray")


@dataclass
class StoreDiagnosis:
    diagnoses: list[Diagnosis]
    episodes: int  # episodes read (matching the filters), diagnosed or not
    simulated: bool


def is_simulated(episodes: Sequence[EpisodeTrace]) -> bool:
    return any(ep.attributes.get(A.SIMULATED) or any(s.get(A.SIMULATED) for s in ep.steps[:1])
               for ep in episodes)


Keyed = list[tuple[Any, Diagnosis]]

# Loading and diagnosing a chunk allocates hundreds of thousands of short-lived containers (parsed
# attributes, records, observations) and next to no cyclic garbage; at the default threshold (700)
# the cycle collector runs thousands of times over them, about a tenth of the CPU of a whole run
# (``python -m benchmarks.bench_diagnose --demo``). A larger first threshold still collects cycles,
# with at most this many young objects waiting.
GC_YOUNG_THRESHOLD = 50_000


@contextmanager
def few_collections() -> Iterator[None]:
    """The cycle collector's first threshold raised to ``GC_YOUNG_THRESHOLD`` while a store is
    diagnosed, and put back afterwards (``diagnose_store`` may run inside someone's program)."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], GC_YOUNG_THRESHOLD), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _steps_where(include_success: bool) -> str | None:
    """The episodes whose steps are parsed: the ones ``_diagnose_chunk`` diagnoses. Successful
    ones come with their first step only, which is all ``is_simulated`` reads of them."""
    return None if include_success else "success IS NOT TRUE"


def _diagnose_chunk(diagnoser: Diagnoser, keyed: list[tuple[Any, EpisodeTrace]],
                    include_success: bool, min_confidence: float) -> tuple[Keyed, int, bool]:
    chosen = [(k, ep) for k, ep in keyed if include_success or ep.success is not True]
    out = diagnose_episodes(diagnoser, [ep for _, ep in chosen], min_confidence=min_confidence)
    keys = [k for k, _ in chosen] if len(out) == len(chosen) else [None] * len(out)
    return list(zip(keys, out, strict=True)), len(keyed), is_simulated([ep for _, ep in keyed])


def _chunk_job(path: str, trace_ids: list[str], where: str | None, diagnoser: Diagnoser,
               include_success: bool, min_confidence: float) -> tuple[Keyed, int, bool]:
    """One worker's share: these traces, loaded and diagnosed where the worker runs."""
    pairs: Keyed = []
    n, sim = 0, False
    with few_collections():
        for keyed in iter_keyed_chunks(path, blind=True, trace_ids=trace_ids, where=where,
                                       chunk_spans=1 << 62, steps_where=_steps_where(include_success)):
            p, k, s = _diagnose_chunk(diagnoser, keyed, include_success, min_confidence)
            pairs += p
            n += k
            sim = sim or s
    return pairs, n, sim


def diagnose_store(path: str | os.PathLike[str], diagnoser: Diagnoser, *, tasks: Sequence[str] = (),
                   conditions: Sequence[str] = (), trace_ids: Sequence[str] | None = None,
                   include_success: bool = False, executor: str = "local", ray_address: str | None = None,
                   chunk_spans: int = DEFAULT_CHUNK_SPANS, min_confidence: float = CONFIDENCE_MIN,
                   workers: int = 1) -> StoreDiagnosis:
    """Diagnose every failed (or, with ``include_success``, every) episode of a store.

    ``workers`` > 1 maps the store's chunks over that many local processes (``executor`` local);
    the result is the same as in one process, in the same order.
    """
    if executor not in EXECUTORS:
        raise DiagnoseError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    path = str(path)
    if not os.path.exists(path):
        raise DiagnoseError(no_such_file(path))
    where = where_clause(tasks, conditions)
    ids = list(trace_ids) if trace_ids else None
    try:
        parts = None
        if executor == "ray" or workers > 1:
            full = os.path.abspath(path)
            groups = trace_groups(full, ids, chunk_spans)
            job_args = (where, diagnoser, include_success, min_confidence)
            if executor == "ray":
                parts = map_ray(_chunk_job, full, groups, *job_args, ray_address=ray_address)
            elif len(groups) > 1:
                parts = map_processes(_chunk_job, full, groups, *job_args, workers=workers)
        if parts is None:
            with few_collections():
                parts = [_diagnose_chunk(diagnoser, keyed, include_success, min_confidence)
                         for keyed in iter_keyed_chunks(path, blind=True, trace_ids=ids, where=where,
                                                        chunk_spans=chunk_spans,
                                                        steps_where=_steps_where(include_success))]
    except StoreError as exc:
        raise DiagnoseError(str(exc)) from None
    pairs = [p for part, _, _ in parts for p in part]
    if all(k is not None for k, _ in pairs):  # the order a whole-store load gives
        pairs.sort(key=lambda kd: kd[0])
    return StoreDiagnosis([d for _, d in pairs], sum(n for _, n, _ in parts), any(s for _, _, s in parts))
