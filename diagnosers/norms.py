"""What each tool answers across a whole store: the keys its clean results carry, and how often.

A tool's first answer in an episode has nothing earlier in that episode to be compared with, so a
key renamed or dropped there is silent to the per-episode comparisons of ``view.py``; in the blind
rounds such first answers were the largest class of missed data faults after wrong values. A store
holds the same tools answering many times over. What a tool returns in nearly every clean result
of a store (``USUAL`` of at least ``MIN_RESULTS``) is its contract in practice, and an answer that
breaks it is evidence no single episode holds:

- *renamed*: usual keys are missing and the answer carries keys the tool almost never returns
  (``RARE``): the same facts under other names;
- *cut*: at least two of the usual keys, and a third of them or more, are missing and nothing
  stands in their place (one optional-looking member left out is no cut);
- *numbers as strings*: the answer delivers numbers as strings, which the tool's answers almost
  never do (an API writes its amounts one way: Amadeus always as strings, most as numbers);
- *empty*: ``[]``, ``{}``, ``null`` or ``""`` from a tool that almost never answers empty (a
  search that often finds nothing has empty answers as part of its norm);
- *fewer items than counted*: a count member (``total``) above the items of the answer's one
  list, from a tool whose answers almost never say so. Beside other data a count can be an
  amount (an order's ``total``), so only the tool's own answers tell a cut from its way.

An optional member is not usual (it is absent from more than ``1 - USUAL`` of the results), so
leaving it out is no deviation; a key a tool returns now and then is not rare. Only our own
content-free attributes are counted (``agentchaos.tool.result_keys``, ``result_record_keys``,
``result_numeric_strings`` and ``result_count_above``), in one aggregate query, so building the
norms reads no content and costs one pass of SQL (about 5% of ``diagnose --all`` on demo-shaped
episodes). The norms depend on the store, not on the episodes a filter picks, and read no ground
truth.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from agentchaos_otel import attributes as A
from agentchaos_otel.records import EpisodeTrace, StepRecord
from agentchaos_otel.store.database.connect import StoreError, attach_read_only
from agentchaos_otel.store.database.schema import jpath
from agentchaos_otel.store.read.chunks import source_sql
from agentchaos_otel.trace import foreign
from agentchaos_otel.trace.processors import OWN_SCOPE
from diagnosers.observe import Observation, observe_step

MIN_RESULTS = 20  # clean results of a tool before it has a norm
USUAL = 0.95  # a key in at least this share of them is part of the tool's answer
RARE = 0.02  # a key in at most this share is one the tool does not return
FAMILIAR = 0.5  # a key in at least this share is the tool's own, whatever other tools write

# (tool, top-level keys or None, record keys, whether numbers came as strings, whether the answer
# was empty, whether a count member was above its items, how many answers)
KeyRow = tuple[str, Sequence[str] | None, Sequence[str], bool, bool, bool, int]
# Counted per tool like keys, at the level "values", over its clean and its empty answers.
NUMBERS_AS_STRINGS = "numbers as strings"
EMPTY = "empty"
COUNT_ABOVE = "count above items"


@dataclass(frozen=True)
class KeyNorm:
    """How many clean results of one tool named keys at one level, and how often each key."""

    results: int
    counts: Mapping[str, int]
    usual: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        need = USUAL * self.results
        object.__setattr__(self, "usual", frozenset(k for k, n in self.counts.items() if n >= need))

    def familiar(self, key: str) -> bool:
        return self.counts.get(key, 0) >= FAMILIAR * self.results

    def rare(self, key: str) -> bool:
        """Returned by at most ``RARE`` of the tool's other answers (the one judged counts once)."""
        return self.counts.get(key, 0) - 1 <= RARE * max(self.results - 1, 0)


@dataclass(frozen=True)
class Deviation:
    """An answer unlike what its tool returns almost always: ``key_rename`` or ``truncated``."""

    fault_type: str
    # "result" (its own keys) | "records" (the keys of a listing's records) | "values" (numbers as
    # strings) | "count" (a count above the items; ``missing`` holds the count member)
    level: str
    missing: tuple[str, ...]
    unfamiliar: tuple[str, ...]
    results: int  # clean results the norm was read from

    def brief(self) -> str:
        """The deviation in a few words, as the LLM diagnoser's step line shows it."""
        if self.level == "count":
            return f"{self.fault_type}: count {self.missing[0]} above items"
        return (f"{self.fault_type}: missing {','.join(self.missing[:6])}"
                + (f"; unfamiliar {','.join(self.unfamiliar[:6])}" if self.unfamiliar else ""))

    def describe(self) -> str:
        if self.level == "count":
            return (f"a count member ({self.missing[0]}) above the items it holds, which this tool's answers "
                    f"carry in at most {RARE:.0%} of {self.results} clean results across the store")
        if self.level == "values":
            return (f"numbers delivered as strings, which this tool's answers carry in at most {RARE:.0%} of "
                    f"{self.results} clean results across the store")
        lost = ", ".join(self.missing[:4])
        where = "its records" if self.level == "records" else "it"
        if self.fault_type == "key_rename":
            return (f"keys this tool returns in {USUAL:.0%}+ of {self.results} clean results across the store "
                    f"({lost}) are missing and {where} carries keys it almost never returns "
                    f"({', '.join(self.unfamiliar[:4])})")
        return (f"{len(self.missing)} of the keys this tool returns in {USUAL:.0%}+ of {self.results} clean "
                f"results across the store are missing from {where} ({lost})")


class ToolNorms:
    """Per tool and level (a result's own keys, its records' keys, its values' types), the store's
    norm."""

    def __init__(self, top: Mapping[str, KeyNorm], records: Mapping[str, KeyNorm],
                 values: Mapping[str, KeyNorm] | None = None):
        self.top = dict(top)
        self.records = dict(records)
        self.values = dict(values or {})

    def __len__(self) -> int:
        return len(self.top) + len(self.records) + len(self.values)

    @classmethod
    def from_rows(cls, rows: Iterable[KeyRow]) -> ToolNorms:
        results: Counter[str] = Counter()
        listed: Counter[str] = Counter()
        answered: Counter[str] = Counter()
        top: dict[str, Counter[str]] = {}
        rec: dict[str, Counter[str]] = {}
        val: dict[str, Counter[str]] = {}
        for tool, keys, record_keys, numeric, empty, above, n in rows:
            answered[tool] += n
            counts = val.setdefault(tool, Counter())
            if empty:
                counts[EMPTY] += n
                continue  # an empty answer names no keys
            if numeric:
                counts[NUMBERS_AS_STRINGS] += n
            if above:
                counts[COUNT_ABOVE] += n
            if keys is not None:
                results[tool] += n
                counts = top.setdefault(tool, Counter())
                for k in set(keys):
                    counts[k] += n
            if record_keys:
                listed[tool] += n
                counts = rec.setdefault(tool, Counter())
                for k in set(record_keys):
                    counts[k] += n
        return cls({t: KeyNorm(results[t], c) for t, c in top.items() if results[t] >= MIN_RESULTS},
                   {t: KeyNorm(listed[t], c) for t, c in rec.items() if listed[t] >= MIN_RESULTS},
                   {t: KeyNorm(answered[t], c) for t, c in val.items() if answered[t] >= MIN_RESULTS})

    @classmethod
    def from_observations(cls, observations: Iterable[Observation]) -> ToolNorms:
        """Norms of observations already made (episodes loaded in memory), counted as the store's are."""
        return cls.from_rows((*_row(o), 1) for o in observations if _clean(o) or _empty(o))

    @classmethod
    def from_episodes(cls, episodes: Iterable[EpisodeTrace]) -> ToolNorms:
        return cls.from_observations(observe_step(s, i) for ep in episodes for i, s in enumerate(ep.steps)
                                     if s.kind == "tool")

    @classmethod
    def from_store(cls, path: str | os.PathLike[str]) -> ToolNorms:
        """One aggregate over the store's spans: distinct key sets per tool and their counts. It
        reads the spans, not the ``tool_calls`` view (which derives steps and costs as much again
        as the whole count), parses each span's attributes once, and runs in a DuckDB instance of
        its own with ``QUERY_MEMORY``: blocks read stay cached up to an instance's limit (805 MB of
        RSS for 100k episodes without it, about 200 MB with it), and the instance a caller may
        have open on the same file keeps its settings."""
        sql, attach = source_sql(path)  # the store checked (missing, empty, foreign, newer) first
        try:
            rows = _store_rows(sql, attach, QUERY_MEMORY)
        except duckdb.OutOfMemoryException:  # key sets that do not fit: count them without the limit
            rows = _store_rows(sql, attach, None)
        except duckdb.Error as exc:  # a file that claims our layout without holding it
            raise StoreError(f"{path}: cannot read its tool answers ({' '.join(str(exc).split())[:200]})") from None
        return cls.from_rows(rows)

    def familiar(self, o: Observation) -> frozenset[str]:
        """The keys of o's answer (its own and its records') that its tool returns in at least
        ``FAMILIAR`` of its answers across the store: the tool's own way of answering, which a
        comparison with other tools or with a few of its answers must not read as a change."""
        out = set()
        for norms, keys in ((self.top, o.result_keys), (self.records, o.result_record_keys)):
            norm = norms.get(o.tool_name or "")
            if norm is not None and keys:
                out.update(k for k in keys if norm.familiar(k))
        return frozenset(out)

    def writes_numbers_as_strings(self, o: Observation) -> bool:
        """Whether o's tool delivers numbers as strings in at least ``FAMILIAR`` of its answers
        across the store (zip codes, Amadeus's prices): then a number as a string is its way."""
        norm = self.values.get(o.tool_name or "")
        return norm is not None and norm.familiar(NUMBERS_AS_STRINGS)

    def optional(self, o: Observation, keys: Iterable[str]) -> frozenset[str]:
        """Of ``keys`` missing from o's own answer, those its tool does not return in ``USUAL`` of its
        answers across the store: optional members, whose absence is no loss."""
        norm = self.top.get(o.tool_name or "")
        return frozenset(k for k in keys if norm is not None and k not in norm.usual)

    def deviation(self, o: Observation) -> Deviation | None:
        """How o's answer breaks its tool's norm; None when it does not or when the tool has no norm.

        A count above the items is read first: it says outright that items were left out, where
        keys gone and others come (a ``total`` that became ``rows_before_limit_at_least``) only
        suggest a rename. Then the result's own keys, its records' keys, numbers as strings."""
        if not _clean(o) or not o.tool_name:
            return None
        values = self.values.get(o.tool_name)
        if o.result_count_above and values is not None and values.rare(COUNT_ABOVE):
            return Deviation("truncated", "count", (o.result_count_above,), (), values.results)
        for level, norms, keys in (("result", self.top, o.result_keys), ("records", self.records,
                                                                          o.result_record_keys)):
            norm = norms.get(o.tool_name)
            if norm is None or not keys or not norm.usual:
                continue
            have = set(keys)
            missing = tuple(sorted(norm.usual - have))
            if not missing:
                continue
            unfamiliar = tuple(sorted(k for k in have if norm.rare(k)))
            if unfamiliar:
                return Deviation("key_rename", level, missing, unfamiliar, norm.results)
            if len(missing) >= 2 and 3 * len(missing) >= len(norm.usual):
                return Deviation("truncated", level, missing, (), norm.results)
        if o.result_numeric_strings and values is not None and values.rare(NUMBERS_AS_STRINGS):
            return Deviation("key_rename", "values", (), (), values.results)
        return None

    def rarely_empty(self, o: Observation) -> int:
        """For an empty answer of a tool that almost never answers empty across the store, how many
        answers the norm was read from; else 0."""
        norm = self.values.get(o.tool_name or "")
        return norm.results if _empty(o) and norm is not None and norm.rare(EMPTY) else 0


# Our result attributes in one parse per span: 1 is_json, 2 is_error, 3 empty, 4 failure, 5 keys,
# 6 record keys, 7 numeric strings, 8 count above items, then the tool name (ours,
# OpenInference's); a span without them is no tool result.
_READ = (A.TOOL_RESULT_IS_JSON, A.TOOL_RESULT_IS_ERROR, A.TOOL_RESULT_EMPTY, A.TOOL_RESULT_FAILURE,
         A.TOOL_RESULT_KEYS, A.TOOL_RESULT_RECORD_KEYS, A.TOOL_RESULT_NUMERIC_STRINGS, A.TOOL_RESULT_COUNT_ABOVE,
         *foreign.TOOL_NAME)
_STORE_SQL = f"""
SELECT COALESCE({", ".join(f"v[{9 + i}]->>'$'" for i in range(len(foreign.TOOL_NAME)))},
                string_split(name, ' ')[-1]) AS tool, v[5] AS k, v[6] AS r,
       COALESCE(TRY_CAST(v[7]->>'$' AS BIGINT), 0) > 0 AS numeric,
       COALESCE(v[3]->>'$', 'false') = 'true' AS empty, COALESCE(v[8]->>'$', '') <> '' AS above,
       count(*) AS n
FROM (SELECT name, json_extract(attributes, [{", ".join(jpath(k) for k in _READ)}]) AS v
      FROM spans WHERE contains(attributes, '"{A.TOOL_RESULT_IS_JSON}"'))
WHERE (v[1]->>'$' = 'true' OR v[3]->>'$' = 'true') AND COALESCE(v[2]->>'$', 'false') <> 'true'
  AND COALESCE(v[4]->>'$', '') = ''
GROUP BY ALL"""


# Tool spans of other instrumentations (OpenInference's, the GenAI conventions'): none of our
# signals, only the captured result, from which ``foreign.derive_tool`` derives them as the
# per-step observation does; a store of a framework traced that way has its norms too.
_FOREIGN_SQL = f"""
SELECT name, attributes FROM spans
WHERE scope_name IS DISTINCT FROM '{OWN_SCOPE}' AND NOT contains(attributes, '"{A.TOOL_RESULT_IS_JSON}"')
  AND ({" OR ".join(f"contains(attributes, '{json.dumps(k)}')" for k in foreign.TOOL_RESULT)})
  AND (attributes->>{jpath(A.OI_SPAN_KIND)} = 'TOOL'
       OR attributes->>{jpath(A.GEN_AI_OPERATION_NAME)} = '{A.OP_EXECUTE_TOOL}')"""


def _foreign_rows(conn: duckdb.DuckDBPyConnection) -> list[KeyRow]:
    """The foreign tool spans' answers, observed as the episodes' steps are and counted batch by batch."""
    counts: Counter[tuple[Any, ...]] = Counter()
    cursor = conn.execute(_FOREIGN_SQL)
    while batch := cursor.fetchmany(4096):
        for name, raw in batch:
            try:
                attrs = json.loads(raw)
            except ValueError:
                continue
            o = observe_step(StepRecord(0, "", "tool", str(name), 0, 0, attributes=attrs), 0)
            if _clean(o) or _empty(o):
                counts[_row(o)] += 1
    return [(*row, n) for row, n in counts.items()]


def _row(o: Observation) -> tuple[str, tuple[str, ...] | None, tuple[str, ...], bool, bool, bool]:
    """What a norm counts of one answer (a ``KeyRow`` without its count)."""
    return (o.tool_name or "", o.result_keys, o.result_record_keys, bool(o.result_numeric_strings),
            o.result_empty, bool(o.result_count_above))


QUERY_MEMORY = "128MB"


def _store_rows(sql: str, attach: str | None, memory: str | None) -> list[KeyRow]:
    config = {"memory_limit": memory} if memory else {}
    conn = duckdb.connect(config=config)
    try:
        if attach is not None:
            conn.execute(attach_read_only(attach, "src"))
        conn.execute(f"CREATE TEMP VIEW spans AS {sql}")
        ours: list[KeyRow] = [(tool, _keys(k), _keys(r) or (), bool(numeric), bool(empty), bool(above), n)
                              for tool, k, r, numeric, empty, above, n in conn.execute(_STORE_SQL).fetchall()]
        return ours + _foreign_rows(conn)
    finally:
        conn.close()


def _clean(o: Observation) -> bool:
    """A JSON tool result that is neither an error, nor empty, nor a reported failure."""
    return (o.kind == "tool" and bool(o.result_is_json) and not o.result_is_error and not o.result_empty
            and not o.result_failure)


def _empty(o: Observation) -> bool:
    """An empty answer (``[]``, ``{}``, ``null``, ``""``) that is neither an error nor a reported failure."""
    return o.kind == "tool" and o.result_empty and not o.result_is_error and not o.result_failure


def _keys(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return tuple(str(k) for k in value) if isinstance(value, list) else None
