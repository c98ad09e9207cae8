"""Trace files of 1k, 10k or 100k SIMULATED episodes for the analysis benchmarks.

A pool of distinct simulated episodes (``benchmarks.corpora.synthetic``) goes through the real write path
once: OTel SDK spans, the project's ``DuckDBSpanExporter``, the store schema and views. Larger
files are then grown inside DuckDB by copying the pool's spans with new trace ids, shifted start
times and suffixed task ids, because exporting a million spans one SDK span at a time measures
the exporter (another benchmark) rather than the analysis. Every copy is a valid episode of the
same shape, so per-episode analysis cost is the pool's, and the scaling is the analysis's own.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import open_store
from agentchaos_otel.store.database.schema import SPAN_COLUMNS
from benchmarks.corpora import synthetic
from benchmarks.corpora.spans import write_episodes

POOL_TASKS = 4  # x every config x 2 seeds ~ 400 distinct episodes


def pool_episodes(n_tasks: int = POOL_TASKS) -> list:
    """Distinct simulated episodes over every fault configuration (held-out wordings included)."""
    eps = synthetic.make_corpus(n_tasks, 2, heldout=True)
    # Deterministic, unique trace ids; the SDK assigns its own on export anyway.
    return [dataclasses.replace(e, trace_id=f"pool-{i}") for i, e in enumerate(eps)]


def write_pool(path: Path, n_tasks: int = POOL_TASKS) -> int:
    """The pool through the real exporter; returns the number of episodes written."""
    return write_episodes(pool_episodes(n_tasks), path)


def grow(pool_path: Path, out: Path, n_episodes: int) -> int:
    """Copy ``pool_path`` to ``out`` and grow it in SQL to exactly ``n_episodes`` episodes."""
    out.unlink(missing_ok=True)
    shutil.copyfile(pool_path, out)
    with open_store(out, read_only=False) as conn:
        pool = conn.execute("SELECT count(DISTINCT trace_id) FROM spans").fetchone()[0]
        span_ns = conn.execute("SELECT max(end_ns) - min(start_ns) + 1000 FROM spans").fetchone()[0]
        if n_episodes < pool:
            conn.execute("""DELETE FROM spans WHERE trace_id NOT IN (
                SELECT trace_id FROM (SELECT trace_id, min(start_ns) s FROM spans GROUP BY trace_id)
                ORDER BY s, trace_id LIMIT ?)""", [n_episodes])
            return n_episodes
        copies = -(-n_episodes // pool)
        task = f"'$.\"{A.TASK_ID}\"'"
        cols = list(SPAN_COLUMNS)
        select = {c: c for c in cols}
        select["trace_id"] = "md5(s.trace_id || ':' || k.k::VARCHAR)"
        select["start_ns"] = f"start_ns + k.k * {span_ns}"
        select["end_ns"] = f"end_ns + k.k * {span_ns}"
        select["attributes"] = (f"CASE WHEN json_exists(attributes, {task}) THEN json_merge_patch(attributes, "
                                f"json_object('{A.TASK_ID}', json_extract_string(attributes, {task}) "
                                f"|| '~' || k.k::VARCHAR)) ELSE attributes END")
        conn.execute("""
            CREATE TEMP TABLE pool_ids AS
            SELECT trace_id, row_number() OVER (ORDER BY min(start_ns), trace_id) - 1 AS idx
            FROM spans GROUP BY trace_id""")
        conn.execute(f"""
            INSERT INTO spans ({', '.join(cols)})
            SELECT {', '.join(f'{v} AS {c}' for c, v in select.items())}
            FROM spans s JOIN pool_ids p USING (trace_id)
            CROSS JOIN (SELECT range AS k FROM range(1, {copies})) k
            WHERE k.k * {pool} + p.idx < {n_episodes}""")
    return n_episodes


def build(cache: Path, n_episodes: int) -> Path:
    """A trace file of ``n_episodes`` episodes under ``cache`` (reused when already built)."""
    cache.mkdir(parents=True, exist_ok=True)
    pool = cache / "pool.duckdb"
    if not pool.exists():
        tmp = cache / "pool.tmp.duckdb"
        tmp.unlink(missing_ok=True)
        write_pool(tmp)
        tmp.rename(pool)
    out = cache / f"episodes_{n_episodes}.duckdb"
    if not out.exists():
        tmp = cache / f"episodes_{n_episodes}.tmp.duckdb"
        grow(pool, tmp, n_episodes)
        tmp.rename(out)
    return out
