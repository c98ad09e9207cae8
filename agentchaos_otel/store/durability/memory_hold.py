"""Span rows held in memory while neither the database nor its spool can be written (disk full).

A full disk is usually freed within minutes, and the spans of that time are the evidence of what
went wrong, so the exporter keeps them in memory up to a bound (``AGENTCHAOS_MEMORY_SPOOL_MB``,
default 64 MiB) and writes them with the next batch that gets through. It says so once per
outage, not once per batch; only rows beyond the bound are lost, and that is logged with a count.
"""

from __future__ import annotations

import logging
from typing import Any

from agentchaos_otel import settings

logger = logging.getLogger(__name__)

def memory_bound_bytes() -> int:
    return int(settings.MEMORY_SPOOL_MB.value() * 1024 * 1024)


def row_size(row: dict[str, Any]) -> int:
    """Rough bytes a row holds (its strings dominate), cheap enough to run per row."""
    return 64 + sum(len(v) for v in row.values() if isinstance(v, str))


class MemoryHold:
    """Bounded in-memory fallback of one exporter; callers serialise access (the path lock)."""

    def __init__(self, db_path: str, limit_bytes: int | None = None,
                 log: logging.Logger | None = None) -> None:
        self.db_path = db_path
        self.log = log or logger  # the exporter's logger: one place to filter store messages
        self.limit = memory_bound_bytes() if limit_bytes is None else limit_bytes
        self._rows: list[dict[str, Any]] = []
        self._bytes = 0
        self._announced = False

    def __len__(self) -> int:
        return len(self._rows)

    def __bool__(self) -> bool:
        return bool(self._rows)

    def take(self) -> list[dict[str, Any]]:
        """Every held row, oldest first; the hold is empty afterwards."""
        rows, self._rows, self._bytes = self._rows, [], 0
        return rows

    def hold(self, rows: list[dict[str, Any]], why: str) -> Any:
        """Keep rows up to the bound; SUCCESS when all were kept, FAILURE when some were lost."""
        from opentelemetry.sdk.trace.export import SpanExportResult

        kept = 0
        for r in rows:
            size = row_size(r)
            if self._bytes + size > self.limit:
                break
            self._rows.append(r)
            self._bytes += size
            kept += 1
        if not self._announced:
            self.log.error("%s; holding spans in memory (up to %.0f MiB, %s) until the disk takes them",
                         why, self.limit / 1048576, settings.MEMORY_SPOOL_MB.name)
            self._announced = True
        lost = len(rows) - kept
        if lost:
            self.log.error("%s: memory hold full (%.0f MiB): %d spans lost", self.db_path,
                         self.limit / 1048576, lost)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def released(self, n: int, where: str) -> None:
        """Held rows reached the database or the spool: the outage is over."""
        if self._announced:
            self.log.warning("%s: %d spans held in memory written to the %s", self.db_path, n, where)
        self._announced = False
