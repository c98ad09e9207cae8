"""Step-prefix feature rows of a whole trace store (``agentchaos predict features``).

Training a model of one's own, or looking at what the predictor sees, starts from the rows
``prefix_table`` gives: one per step prefix of every episode. A fleet's store holds millions of
them, built from more episodes than fit in memory at once, so the store is read a group of
whole traces at a time (``store/fanout.py``), each step carrying only the attributes the
features read (``STEP_KEYS``, picked out in DuckDB instead of parsing every attribute in
Python), and the groups are spread over local processes. The rows come out in the whole-store
episode order of ``load_episodes`` however many processes made them, so the output does not
depend on ``workers``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentchaos_otel import attributes as A
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.store.read.chunks import DEFAULT_CHUNK_SPANS
from agentchaos_otel.store.read.episodes import iter_keyed_chunks
from agentchaos_otel.store.read.fanout import iter_processes, trace_groups
from predictors.features import OBSERVED_KEYS, feature_names, prefix_table

# What predictors read of a step: the features' observed keys, and whether the step was
# simulated (``evaluate.is_simulated`` labels a corpus by it). No ground truth among them.
STEP_KEYS: tuple[str, ...] = (*OBSERVED_KEYS, A.SIMULATED)
assert not any(A.is_ground_truth(k) for k in STEP_KEYS)


def episode_simulated(ep: EpisodeTrace) -> bool:
    """The episode or one of its steps says it came from the simulated model."""
    return bool(ep.attributes.get(A.SIMULATED)) or any(bool(s.get(A.SIMULATED)) for s in ep.steps)


@dataclass(frozen=True)
class Part:
    """One group's episodes (in their whole-store sort keys) and their prefix rows."""

    keys: list[tuple[Any, ...]]
    meta: list[tuple[str, str | None, bool | None, bool]]  # trace id, task id, success, simulated
    bounds: list[int]  # rows of episode i are rows[bounds[i]:bounds[i + 1]]
    steps: list[int]
    rows: np.ndarray


def _part(keyed: Iterable[tuple[tuple[Any, ...], EpisodeTrace]], names: Sequence[str]) -> Part:
    keyed = sorted(keyed, key=lambda kv: kv[0])
    table = prefix_table((ep for _, ep in keyed), names)
    counts = np.bincount(np.asarray(table.episode, dtype=np.int64), minlength=len(keyed))
    bounds = [0, *np.cumsum(counts).tolist()]
    meta = [(ep.trace_id, ep.task_id, ep.success, episode_simulated(ep)) for _, ep in keyed]
    return Part([k for k, _ in keyed], meta, bounds, table.step, table.rows)


def _iter_group(path: str, trace_ids: list[str] | None, names: tuple[str, ...], chunk_spans: int) -> Iterator[Part]:
    """These traces (all when None), a part per chunk of projected episodes, so only one chunk's
    episodes are alive at a time."""
    for chunk in iter_keyed_chunks(path, blind=True, trace_ids=trace_ids, where=None, chunk_spans=chunk_spans,
                                   step_keys=STEP_KEYS):
        yield _part(chunk, names)


def _group_job(path: str, trace_ids: list[str] | None, names: tuple[str, ...], chunk_spans: int) -> list[Part]:
    """One process's share (a group of traces), as one part per chunk."""
    return list(_iter_group(path, trace_ids, names, chunk_spans))


def iter_parts(path: str | os.PathLike[str], names: tuple[str, ...], *, workers: int = 1,
               chunk_spans: int = DEFAULT_CHUNK_SPANS) -> Iterator[Part]:
    """The store's parts in the order their traces were stored, each sorted within itself.

    ``workers`` > 1 spreads groups of traces over that many local processes (a store of one group
    stays in this one); the parts are the same either way.
    """
    path = str(path)
    if workers > 1:
        full = os.path.abspath(path)
        groups = trace_groups(full, None, chunk_spans)
        if len(groups) > 1:
            for share in iter_processes(_group_job, full, groups, names, 1 << 62, workers=workers):
                yield from share
            return
    yield from _iter_group(path, None, names, chunk_spans)


@dataclass(frozen=True, eq=False)
class StoreFeatures:
    """Feature rows of every step prefix of a store, with the episode each row belongs to."""

    names: tuple[str, ...]
    rows: np.ndarray  # (prefixes, len(names)) float64
    trace_id: list[str]
    task_id: list[str | None]
    success: list[bool | None]  # the episode's outcome
    step: list[int]  # step number of the prefix's last step
    simulated: list[bool]  # the episode ran against a simulated model
    episodes: int

    def frame(self) -> Any:
        """The rows as a polars frame: episode columns, then one column per feature."""
        import polars as pl

        cols: dict[str, Any] = {
            "trace_id": pl.Series(self.trace_id, dtype=pl.String),
            "task_id": pl.Series(self.task_id, dtype=pl.String),
            "success": pl.Series(self.success, dtype=pl.Boolean),
            "step": pl.Series(self.step, dtype=pl.Int64),
            "simulated": pl.Series(self.simulated, dtype=pl.Boolean),
        }
        for j, name in enumerate(self.names):
            cols[name] = pl.Series(self.rows[:, j], dtype=pl.Float64)
        return pl.DataFrame(cols)


def _merge(parts: Sequence[Part], names: tuple[str, ...]) -> StoreFeatures:
    order = sorted(((key, p, i) for p, part in enumerate(parts) for i, key in enumerate(part.keys)),
                   key=lambda kpi: kpi[0])
    blocks: list[np.ndarray] = []
    out: dict[str, list[Any]] = {"trace_id": [], "task_id": [], "success": [], "step": [], "simulated": []}
    for _, p, i in order:
        part = parts[p]
        lo, hi = part.bounds[i], part.bounds[i + 1]
        if hi == lo:
            continue
        blocks.append(part.rows[lo:hi])
        trace_id, task_id, success, simulated = part.meta[i]
        n = hi - lo
        out["trace_id"] += [trace_id] * n
        out["task_id"] += [task_id] * n
        out["success"] += [success] * n
        out["simulated"] += [simulated] * n
        out["step"] += part.steps[lo:hi]
    rows = np.concatenate(blocks) if blocks else np.zeros((0, len(names)))
    return StoreFeatures(names, rows, out["trace_id"], out["task_id"], out["success"], out["step"],
                         out["simulated"], episodes=len(order))


def store_features(path: str | os.PathLike[str], feature_set: str = "both", *, workers: int = 1,
                   chunk_spans: int = DEFAULT_CHUNK_SPANS) -> StoreFeatures:
    """Feature rows of every step prefix of every episode of a store (file or Parquet dataset).

    ``workers`` > 1 spreads groups of traces over that many local processes; the result is the
    same as in one process. Raises ``StoreError`` for a file that is not a readable store.
    """
    names = feature_names(feature_set)
    return _merge(list(iter_parts(path, names, workers=workers, chunk_spans=chunk_spans)), names)
