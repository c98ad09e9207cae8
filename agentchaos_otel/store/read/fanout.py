"""Analysis of a whole store spread over local processes or Ray workers, a group of traces each.

Every view joins only within one trace (``store/chunks.py``), so a group of whole traces can be
loaded and analysed anywhere the store can be read, and the parts put together give what one
process gives. Loading episodes and analysing them is Python work that holds the interpreter
lock, so one process uses one core: spreading the groups over processes is what uses the others.

The work is a top-level function ``fn(path, trace_ids, *args)`` (it must pickle); the caller
puts the parts back in its own order. Local processes are spawned, not forked: a forked copy of
a lock held by another thread (the episode loader's, the exporter's) would never be released.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from agentchaos_otel.store.read.chunks import chunked_store

R = TypeVar("R")


def trace_groups(path: str, trace_ids: Sequence[str] | None, chunk_spans: int) -> list[list[str]]:
    """The store's traces (or ``trace_ids`` among them) in groups of about ``chunk_spans`` spans,
    in the order they were stored."""
    with chunked_store(path) as store:
        store.plan(trace_ids=trace_ids, chunk_spans=chunk_spans)
        rows = store.conn.execute("SELECT chunk, list(trace_id ORDER BY first_ns NULLS LAST, trace_id) "
                                  "FROM _chunk_ids GROUP BY chunk ORDER BY chunk").fetchall()
    return [list(ids) for _, ids in rows]


def iter_processes(fn: Callable[..., R], path: str, groups: Sequence[list[str]], *args: Any,
                   workers: int) -> Iterator[R]:
    """``fn(path, group, *args)`` for every group, over at most ``workers`` spawned processes,
    yielded in the order of ``groups`` as they come, so a caller that writes each result out
    holds only the results it has not reached yet."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from itertools import repeat

    n = len(groups)
    with ProcessPoolExecutor(max_workers=max(1, min(workers, n)), mp_context=mp.get_context("spawn")) as pool:
        yield from pool.map(fn, repeat(path, n), groups, *(repeat(a, n) for a in args))


def map_processes(fn: Callable[..., R], path: str, groups: Sequence[list[str]], *args: Any,
                  workers: int) -> list[R]:
    """``iter_processes`` as a list."""
    return list(iter_processes(fn, path, groups, *args, workers=workers))


def map_ray(fn: Callable[..., R], path: str, groups: Sequence[list[str]], *args: Any,
            ray_address: str | None) -> list[R]:
    """``map_processes`` on a Ray cluster: every group a task, ``path`` readable on every node.

    The extra arguments go into the object store once, not once per task.
    """
    from agentchaos_otel.parallel.ray_session import ray_session

    with ray_session(ray_address) as ray:
        job = ray.remote(fn)
        shared = [ray.put(a) for a in args]
        return ray.get([job.remote(path, ids, *shared) for ids in groups])
