"""Loading stored episodes as EpisodeTrace objects for diagnosers, predictors and evaluation.

Blinding is on by default so a consumer that forgets about ground truth cannot read it by
accident; evaluation code asks for `blind=False` or uses `load_ground_truth`.

A consumer that reads only a few step attributes (the report) names them (``step_keys``): each
step then carries only those, picked out in DuckDB, and no events, so the whole corpus can be
held in memory and Python parses a few values per step instead of every attribute.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from typing import Any

import duckdb

from agentchaos_otel import attributes as A
from agentchaos_otel.records import EpisodeTrace, FaultLabel, StepRecord, drop_ground_truth
from agentchaos_otel.store.database import schema
from agentchaos_otel.store.database.connect import StoreError, open_store
from agentchaos_otel.store.read.chunks import DEFAULT_CHUNK_SPANS, chunked_store


def _parse(value: Any, default: Any) -> Any:
    if value is None:
        return default
    if isinstance(value, (dict, list)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return default


_EPISODE_SQL = ("SELECT trace_id, span_id, task_id, condition, seed, success, attributes, start_ns, {wanted} "
                "FROM episodes WHERE TRUE")
_STEP_COLUMNS = "trace_id, step, span_id, kind, name, start_ns, end_ns, status_code, error_type"
_STEP_SQL = f"SELECT {_STEP_COLUMNS}, attributes, events FROM steps"


def _step_sql(step_keys: Collection[str] | None) -> str:
    """The step SELECT: every attribute and event, or only the attributes ``step_keys`` names.

    The projection is one JSON object of those keys, built in DuckDB from one parse of each
    step's attributes (a list of paths is one parse; one ``->`` per key would parse the document
    once per key). A key the step lacks comes as JSON null, which ``_step_records`` drops. No
    events are selected. A key that cannot be quoted in a JSON path (a quote character in it)
    raises ValueError; the others also make safe SQL literals, having no quote.
    """
    if step_keys is None:
        return _STEP_SQL
    keys = sorted(set(step_keys))
    if not keys:
        return f"SELECT {_STEP_COLUMNS}, NULL::JSON AS attributes, NULL::JSON AS events FROM steps"
    paths = ", ".join(schema.jpath(k) for k in keys)
    pairs = ", ".join(f"'{k}', _p[{i}]" for i, k in enumerate(keys, 1))
    return (f"SELECT {_STEP_COLUMNS}, json_object({pairs}) AS attributes, NULL::JSON AS events "
            f"FROM (SELECT *, json_extract(attributes, [{paths}]) AS _p FROM steps)")


def _episode_rows(conn: duckdb.DuckDBPyConnection, where: str | None,
                  steps_where: str | None = None) -> list[tuple[Any, ...]]:
    sql = _EPISODE_SQL.format(wanted=f"COALESCE(({steps_where}), FALSE)" if steps_where else "TRUE")
    sql += f" AND ({where})" if where else ""
    return conn.execute(sql + " ORDER BY start_ns, trace_id, span_id").fetchall()


def _step_tuples(conn: duckdb.DuckDBPyConnection, trace_ids: list[str] | None,
                 first_only: bool = False, sql: str = _STEP_SQL) -> list[tuple[Any, ...]]:
    params: list[Any] = []
    if trace_ids is not None:  # a hash semi-join; list_contains would scan the list per row
        sql += " WHERE trace_id IN (SELECT unnest(?::VARCHAR[]))"
        params.append(trace_ids)
    if first_only:
        sql += " QUALIFY row_number() OVER (PARTITION BY trace_id ORDER BY step, start_ns, span_id) = 1"
    return conn.execute(sql + " ORDER BY trace_id, step, start_ns, span_id", params).fetchall()


def _present(attributes: dict[str, Any], shared: dict[Any, Any]) -> dict[str, Any]:
    """A projected step's attributes without the asked-for keys it lacks (JSON null in the object).

    OTel attribute values are never null, and ``StepRecord.get(key, default)`` must give the
    default for a key the step does not carry, as it does on a full load. A projected load is
    held whole (the report), so keys and string values are shared through ``shared``, one object
    per distinct string of a chunk: the JSON parser makes new key strings for every step, and
    they were the largest part of a held step.
    """
    one = shared.setdefault
    return {one(k, k): one(v, v) if type(v) is str else v for k, v in attributes.items() if v is not None}


def _shared(shared: dict[Any, Any], *values: Any) -> tuple[Any, ...]:
    """``values`` as the objects ``shared`` already holds for them (a step's kind, name, status)."""
    return tuple(shared.setdefault(v, v) for v in values)


def _step_record(row: tuple[Any, ...], shared: dict[Any, Any] | None = None) -> StepRecord:
    """The careful conversion of one step row; ``shared`` (a projected load) as in ``_present``."""
    _, step, span_id, kind, name, start, end, status, err, attrs, events = row
    a = _parse(attrs, {})
    if shared is not None:
        a = _present(a, shared)
        kind, name, status = _shared(shared, kind, name, status)
    return StepRecord(int(step), span_id, kind, name or "", int(start or 0), int(end or start or 0),
                      status or "UNSET", err, a, _parse(events, []))


def _step_records(rows: list[tuple[Any, ...]], blind: bool = False,
                  projected: bool = False) -> dict[str, list[StepRecord]]:
    """Rows of ``steps`` as records per trace; the loop every loaded step goes through.

    With ``blind``, ground-truth attributes are dropped from the freshly parsed dicts here, so a
    blind step is built once instead of being built and then copied by ``StepRecord.blind``
    (which the record still goes through, as a check that finds nothing left to remove).
    ``projected`` rows come from ``_step_sql(step_keys)``: their missing keys are dropped.
    """
    out: dict[str, list[StepRecord]] = defaultdict(list)
    loads = json.loads
    shared: dict[Any, Any] | None = {} if projected else None
    try:  # fast path: JSON columns arrive as text, numbers as ints
        for trace_id, step, span_id, kind, name, start, end, status, err, attrs, events in rows:
            start = start or 0
            a = {} if attrs is None else loads(attrs)
            if shared is not None:
                a = _present(a, shared)
                kind, name, status = _shared(shared, kind, name, status)
            ev = [] if events is None or events == "[]" else loads(events)
            record = StepRecord(step, span_id, kind, name or "", start, end or start, status or "UNSET", err,
                                drop_ground_truth(a) if blind else a, ev)
            out[trace_id].append(record.blind() if blind and ev else record)  # events: the full filter
            if type(step) is not int or type(start) is not int:
                raise TypeError
    except (TypeError, ValueError):  # anything unusual: the careful per-value conversion
        out = defaultdict(list)
        for row in rows:
            record = _step_record(row, shared)
            out[row[0]].append(record.blind() if blind else record)
    return out


Fetched = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]


def _fetch(conn: duckdb.DuckDBPyConnection, where: str | None, steps_where: str | None = None,
           steps_sql: str = _STEP_SQL) -> Fetched:
    """The SQL half of a chunk: episode rows and step rows (DuckDB works outside the GIL here)."""
    eps = _episode_rows(conn, where, steps_where)
    if not eps:
        return eps, []
    if steps_where is None:
        return eps, _step_tuples(conn, sorted({e[0] for e in eps}) if where else None, sql=steps_sql)
    wanted = {e[0] for e in eps if e[8]}
    others = {e[0] for e in eps if not e[8]} - wanted
    return eps, (_step_tuples(conn, sorted(wanted), sql=steps_sql) if wanted else []) + (
        _step_tuples(conn, sorted(others), first_only=True, sql=steps_sql) if others else [])


def _build(fetched: Fetched, blind: bool, projected: bool = False) -> list[tuple[tuple[Any, ...], EpisodeTrace]]:
    """The Python half: (sort key, episode) for every episode of the chunk."""
    eps, step_rows = fetched
    steps = _step_records(step_rows, blind, projected)
    out = []
    for trace_id, span_id, task_id, condition, seed, success, attrs, start_ns, _ in eps:
        attributes = _parse(attrs, {})
        if blind:  # the steps are blind already (``_step_records``); the root's attributes here
            attributes = {k: v for k, v in attributes.items() if not A.is_ground_truth(k)}
        ep = EpisodeTrace(
            trace_id=trace_id, task_id=task_id, steps=tuple(steps.get(trace_id, ())),
            success=success, condition=condition, seed=None if seed is None else int(seed),
            attributes=attributes,
        )
        # The order of the old whole-store query: ORDER BY start_ns, trace_id, span_id (NULLS LAST).
        key = (start_ns is None, start_ns or 0, trace_id, span_id is None, span_id or "")
        out.append((key, ep))
    return out


def _error(path: str | os.PathLike[str], exc: duckdb.Error) -> StoreError:
    return StoreError(f"{path}: cannot load episodes ({' '.join(str(exc).split())[:200]})")


def _fetch_chunks(path: str | os.PathLike[str], trace_ids: Sequence[str] | None, where: str | None,
                  steps_where: str | None, steps_sql: str, chunk_spans: int, out: queue.Queue[Any],
                  stop: threading.Event) -> None:
    """Producer thread: run each chunk's SQL while the consumer builds the previous chunk."""
    try:
        with chunked_store(path) as store:
            try:
                # One DuckDB thread: the consumer's Python work takes the other core, and a second
                # DuckDB thread would only contend with it (and spin) for the same CPUs.
                store.conn.execute("SET threads = 1")
                store.plan(trace_ids=trace_ids, chunk_spans=chunk_spans)
                numbers = store.chunks()
                for number in numbers:
                    if stop.is_set():
                        return
                    fetched = _fetch(store.load_chunk(number), where, steps_where, steps_sql)
                    if fetched[0]:
                        out.put(fetched)
            except duckdb.Error as exc:
                raise _error(path, exc) from None
    except BaseException as exc:  # handed to the consumer, raised there
        out.put(exc)
    finally:
        out.put(_DONE)


_DONE = object()


def iter_keyed_chunks(path: str | os.PathLike[str], *, blind: bool, trace_ids: Sequence[str] | None,
                      where: str | None, chunk_spans: int = DEFAULT_CHUNK_SPANS, steps_where: str | None = None,
                      step_keys: Collection[str] | None = None,
                      ) -> Iterator[list[tuple[tuple[Any, ...], EpisodeTrace]]]:
    """Chunks of (sort key, episode); sorting all pairs by key gives ``load_episodes``'s order.

    A producer thread runs the next chunk's SQL while this one is turned into objects, so on a
    machine with a spare core the DuckDB work is hidden behind the Python work.

    ``steps_where`` (an SQL condition over the ``episodes`` view) names the episodes the caller
    will analyse: the others still come, in their place and with their outcome and attributes,
    but carry only their first step (enough to tell what they are, e.g. simulated), so a caller
    that skips successful episodes does not pay for parsing their steps.

    ``step_keys`` (see ``load_episodes``) limits every step to those attributes and no events.
    """
    steps_sql = _step_sql(step_keys)  # a key that cannot be quoted fails here, before any work
    q: queue.Queue[Any] = queue.Queue(maxsize=1)
    stop = threading.Event()
    worker = threading.Thread(target=_fetch_chunks,
                              args=(path, trace_ids, where, steps_where, steps_sql, chunk_spans, q, stop),
                              name="agentchaos-episode-loader", daemon=True)
    worker.start()
    try:
        while True:
            item = q.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield _build(item, blind, step_keys is not None)
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            try:
                q.get(timeout=0.05)
            except queue.Empty:
                pass
        worker.join()


def iter_episode_chunks(path: str | os.PathLike[str], *, blind: bool = True,
                        trace_ids: Sequence[str] | None = None, where: str | None = None,
                        chunk_spans: int = DEFAULT_CHUNK_SPANS) -> Iterator[list[EpisodeTrace]]:
    """Episodes in chunks of whole traces, so memory is bounded by a chunk, not by the store.

    Chunks come in the order their traces were stored; inside a chunk episodes are in start
    order. ``load_episodes`` gives the exact whole-store order when that matters.
    """
    for chunk in iter_keyed_chunks(path, blind=blind, trace_ids=trace_ids, where=where,
                                   chunk_spans=chunk_spans):
        yield [ep for _, ep in chunk]


def iter_episodes(path: str | os.PathLike[str], *, blind: bool = True,
                  trace_ids: Sequence[str] | None = None, where: str | None = None,
                  chunk_spans: int = DEFAULT_CHUNK_SPANS) -> Iterator[EpisodeTrace]:
    """Every episode, streamed chunk by chunk (see ``iter_episode_chunks`` for the order)."""
    for chunk in iter_episode_chunks(path, blind=blind, trace_ids=trace_ids, where=where,
                                     chunk_spans=chunk_spans):
        yield from chunk


def load_episodes(path: str | os.PathLike[str], *, blind: bool = True,
                  trace_ids: Sequence[str] | None = None, where: str | None = None,
                  step_keys: Collection[str] | None = None) -> list[EpisodeTrace]:
    """Episodes in start order, steps in step order.

    `where` is an SQL condition over the `episodes` view (e.g. ``condition = 'bursty'``). A trace
    without an agent root span (a foreign agent, or an episode whose root is not exported yet)
    becomes one episode with the task id its steps carry, usually None. A trace with several root
    agent spans gives one episode per root, each with all steps of the trace. `path` is a
    traces.duckdb file or a directory of hive-partitioned Parquet (``store/parquet.py``).

    With ``step_keys`` every step carries only those attributes (the ones it has: a missing key
    is absent, not None) and no events; the episode's own attributes stay whole. A consumer that
    holds the whole corpus and reads a few step attributes (the report) asks for them, which
    keeps a step to a few hundred bytes instead of several kilobytes. Blinding still applies.
    """
    keyed = [item for chunk in iter_keyed_chunks(path, blind=blind, trace_ids=trace_ids, where=where,
                                                 chunk_spans=DEFAULT_CHUNK_SPANS, step_keys=step_keys)
             for item in chunk]
    keyed.sort(key=lambda kv: kv[0])
    return [ep for _, ep in keyed]


def load_ground_truth(path: str | os.PathLike[str]) -> dict[str, list[FaultLabel]]:
    """Faults that changed what the agent saw, per trace, in step order.

    A fault recorded on a span that is not an LLM or tool step (so has no step) gets step -1.
    """
    with open_store(path) as conn:
        rows = conn.execute(
            "SELECT trace_id, step, span_id, fault_type, target, experiment FROM injected_faults "
            "WHERE COALESCE(changed, TRUE) ORDER BY trace_id, step NULLS LAST, span_id"
        ).fetchall()
    out: dict[str, list[FaultLabel]] = defaultdict(list)
    for trace_id, step, span_id, ftype, target, experiment in rows:
        out[trace_id].append(FaultLabel(step=-1 if step is None else int(step), span_id=span_id,
                                        fault_type=str(ftype), target=target, experiment=experiment))
    return dict(out)
