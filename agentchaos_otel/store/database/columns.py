"""One export's span rows as columns: redacted, repaired and inserted as a batch, not row by row.

The exporter's hot path builds the ``spans`` columns in one pass over the SDK spans (see
``exporter.spans_to_batch``). What made a row expensive was everything around it: a dict per
row, ``redact_row`` with its regexes per row, the repair check per row, Arrow building the table
from dicts. Here each of those is one operation per column:

- redaction: ``redact.candidates`` scans each text column in Arrow's RE2 engine for anything a
  redaction rule could act on; only the rows it names go through ``redact.redact_row`` (the same
  function as for a single span), so the rules stay in one place and a row is redacted exactly
  as ``span_to_row`` redacts it;
- repair: when the Arrow table could be built, no string holds a lone surrogate and no integer
  is outside BIGINT (Arrow refuses both), so only an escaped surrogate in the JSON columns is
  left to find, by one RE2 scan; without a table, a column whose joined text is ASCII without a
  ``\\u`` escape needs none (nearly all). Only the rows found go through ``repair.repair_row``;
- insert: one Arrow table built from the column lists in C.

Rows (dicts) are made only when a batch leaves the fast path: a spool to merge, rows held in
memory, a row the database refuses, a failure that sends the batch to the spool.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from agentchaos_otel import redact
from agentchaos_otel.gil_handoff import Slices
from agentchaos_otel.store.database import schema
from agentchaos_otel.store.database.repair import ESCAPED_SURROGATE_RE2, INT64_MAX, INT64_MIN, JSON_COLUMNS, repair_row

COLUMNS = schema.SPAN_COLUMNS
INT_COLUMNS = schema.SPAN_INT_COLUMNS
_STR_COLUMNS = tuple(c for c in COLUMNS if c not in INT_COLUMNS)
# Where a credential could be: the columns ``redact.redact_row`` looks at but the resource, whose
# JSON is redacted once per resource (exporter and receiver cache it), so not scanned per span.
PER_SPAN_REDACTED = tuple(c for c in redact.ROW_COLUMNS if c != "resource")

# Rows per Arrow conversion call: converting Python values holds the interpreter lock for the
# whole call (about 0.5 µs a value, a JSON column several times that), so a 2048-row column in
# one call kept an agent thread that wanted the lock waiting for a millisecond or more.
ARROW_CHUNK = 256

_arrow_schema: Any = None
_ROW_VALUES = operator.itemgetter(*COLUMNS)


def _schema() -> Any:
    global _arrow_schema
    if _arrow_schema is None:
        import pyarrow as pa

        _arrow_schema = pa.schema([(c, pa.int64() if c in INT_COLUMNS else pa.string()) for c in COLUMNS])
    return _arrow_schema


class SpanBatch:
    """Rows in ``spans`` layout held as one list per column (``COLUMNS`` order)."""

    __slots__ = ("columns", "_table")

    def __init__(self, columns: dict[str, list[Any]]) -> None:
        self.columns = columns
        self._table: Any = None

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]]) -> SpanBatch:
        """A batch of rows in `spans` layout (a missing column is null)."""
        if rows:
            try:  # rows with every column (parsers and the spool write them so): transposed in C
                values = zip(*map(_ROW_VALUES, rows), strict=True)  # one tuple per column
                return cls(dict(zip(COLUMNS, map(list, values), strict=True)))
            except (KeyError, TypeError):
                pass
        return cls({c: [r.get(c) for r in rows] for c in COLUMNS})

    @classmethod
    def concat(cls, parts: Sequence[SpanBatch | Sequence[Mapping[str, Any]]]) -> SpanBatch:
        """One batch of the rows of several batches or row lists, in order."""
        batches = [p if isinstance(p, SpanBatch) else cls.from_rows(p) for p in parts if len(p)]
        if len(batches) == 1:
            return batches[0]
        return cls({c: [v for b in batches for v in b.columns[c]] for c in COLUMNS})

    def discard(self) -> None:
        """Free the columns one by one, so a thread waiting for the interpreter lock gets it between.

        Dropping the batch as a whole frees every value of every column in one C-level cascade
        (tens of thousands of strings for a 2048-span batch, about a millisecond with the lock
        held); the batch is empty afterwards.
        """
        self._table = None
        for col in self.columns.values():
            col.clear()

    def __len__(self) -> int:
        return len(self.columns["trace_id"])

    def row(self, i: int) -> dict[str, Any]:
        return {c: self.columns[c][i] for c in COLUMNS}

    def rows(self) -> list[dict[str, Any]]:
        """The batch as row dicts (the general path: spool, split, memory hold)."""
        cols = [self.columns[c] for c in COLUMNS]
        return [dict(zip(COLUMNS, values, strict=True)) for values in zip(*cols, strict=True)]

    def _put(self, i: int, row: dict[str, Any]) -> None:
        for c in COLUMNS:
            self.columns[c][i] = row.get(c)

    def redact(self) -> int:
        """Run ``redact_row`` on every row a credential rule could change; returns how many."""
        n = len(self)
        table = self.arrow()  # the scan reads the Arrow arrays the insert will use
        if table is not None:  # one scan over the columns end to end: row i is at i, n + i, 2n + i...
            import pyarrow as pa

            texts: Any = pa.chunked_array([ch for c in PER_SPAN_REDACTED for ch in table.column(c).chunks],
                                          pa.string())
        else:
            texts = [v for c in PER_SPAN_REDACTED for v in self.columns[c]]
        flagged = redact.flagged_rows(texts, n)
        if not flagged:
            return 0
        for i in flagged:
            self._put(i, redact.redact_row(self.row(i)))
        self._table = None
        return len(flagged)

    def repair(self) -> int:
        """Run ``repair_row`` on every row that could need it; returns how many rows changed."""
        table = self.arrow()
        suspects = self._suspects_python() if table is None else self._suspects_arrow(table)
        if not suspects:
            return 0
        changed = 0
        for i in sorted(suspects):
            row = self.row(i)
            fixed = repair_row(row)
            if fixed is not row:
                self._put(i, fixed)
                changed += 1
        if changed:
            self._table = None
        return changed

    def _suspects_arrow(self, table: Any) -> set[int]:
        import pyarrow as pa
        import pyarrow.compute as pc

        n = len(self)
        texts = pa.chunked_array([ch for c in JSON_COLUMNS for ch in table.column(c).chunks], pa.string())
        mask = pc.match_substring_regex(texts, ESCAPED_SURROGATE_RE2)  # without the GIL
        if not pc.any(mask).as_py():
            return set()
        return {i % n for i in pc.indices_nonzero(pc.fill_null(mask, False)).to_pylist()}

    def _suspects_python(self) -> set[int]:
        suspects: set[int] = set()
        for c in _STR_COLUMNS:
            col = self.columns[c]
            texts = [v for v in col if v.__class__ is str] if None in col else col
            try:
                joined = "".join(texts)
            except TypeError:  # a value that is not text: let the row path decide
                suspects.update(i for i, v in enumerate(col) if v is not None and v.__class__ is not str)
                continue
            if joined.isascii() and "\\u" not in joined:
                continue
            suspects.update(i for i, v in enumerate(col) if v.__class__ is str and (not v.isascii() or "\\u" in v))
        for c in INT_COLUMNS:
            col = self.columns[c]
            ints = [v for v in col if v.__class__ is int]
            if ints and INT64_MIN <= min(ints) and max(ints) <= INT64_MAX:
                continue
            suspects.update(i for i, v in enumerate(col) if v.__class__ is int and not INT64_MIN <= v <= INT64_MAX)
        return suspects

    def unique_keys(self) -> bool:
        """Whether no (trace_id, span_id) repeats inside the batch (a statement may not hit one twice)."""
        return len(set(zip(self.columns["trace_id"], self.columns["span_id"], strict=True))) == len(self)

    def arrow(self) -> Any:
        """The batch as one Arrow table, or None when a value does not fit its column type."""
        if self._table is not None:
            return self._table
        try:
            import pyarrow as pa
        except ImportError:  # pragma: no cover - a declared dependency
            return None
        sch = _schema()
        arrays = []
        n = len(self)
        try:
            slices = Slices()  # else pyarrow keeps a waiting agent thread out (see gil_handoff.py)
            for c in COLUMNS:
                values, kind = self.columns[c], sch.field(c).type
                chunks = []
                for i in range(0, n, ARROW_CHUNK):
                    chunks.append(pa.array(values[i:i + ARROW_CHUNK], kind))
                    slices.tick()
                arrays.append(pa.chunked_array(chunks, kind))
        except (pa.ArrowException, TypeError, ValueError, OverflowError, UnicodeError):
            return None
        self._table = pa.Table.from_arrays(arrays, schema=sch)
        return self._table


def as_rows(rows: SpanBatch | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of either shape as a list of dicts."""
    if isinstance(rows, SpanBatch):
        return rows.rows()
    return list(rows)
