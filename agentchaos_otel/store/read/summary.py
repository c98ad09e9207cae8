"""What a trace store holds, as one dict (for `agentchaos traces summary` and campaign checks).

Success rates count only episodes whose outcome is known; episodes produced by the simulated
model are counted and flagged so a summary of simulated runs is never mistaken for a real one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import duckdb

from agentchaos_otel.errors import UsageError, unknown
from agentchaos_otel.store.database import schema
from agentchaos_otel.store.database.connect import StoreError, open_store, read_version
from agentchaos_otel.store.read.spooled import waiting_in_spool


def _rate(succeeded: int, known: int) -> float | None:
    return succeeded / known if known else None


def summarize(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The summary dict; StoreError when the file claims to be a store but lacks its tables or views."""
    try:
        return _summarize(path)
    except duckdb.Error as exc:
        reason = " ".join(str(exc).split())[:200]
        raise StoreError(f"{path}: not a usable agentchaos trace store ({reason})") from None


def _summarize(path: str | os.PathLike[str]) -> dict[str, Any]:
    spooled, rejected = waiting_in_spool(path)
    with open_store(path) as conn:
        info = read_version(conn)

        spans, traces = conn.execute("SELECT count(*), count(DISTINCT trace_id) FROM spans").fetchone()
        # Each view query re-derives steps from raw spans, so episodes are derived once here.
        conn.execute("CREATE TEMP TABLE summary_episodes AS SELECT condition, success, triggered, simulated, "
                     "span_id FROM episodes")
        ep = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE span_id IS NULL), count(success), "
            "count(*) FILTER (WHERE success), count(*) FILTER (WHERE triggered), "
            "count(*) FILTER (WHERE simulated) FROM summary_episodes").fetchone()
        by_cond = conn.execute(
            "SELECT condition, count(*), count(success), count(*) FILTER (WHERE success), "
            "count(*) FILTER (WHERE triggered) FROM summary_episodes GROUP BY condition "
            "ORDER BY condition NULLS LAST").fetchall()
        steps, llm, tools = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE kind = 'llm'), count(*) FILTER (WHERE kind = 'tool') "
            "FROM steps").fetchone()
        faults = conn.execute(
            "SELECT COALESCE(fault_type, '?'), count(*), count(*) FILTER (WHERE COALESCE(changed, TRUE)) "
            "FROM injected_faults GROUP BY 1 ORDER BY 1").fetchall()
    n_eps, rootless, known, succeeded, triggered, simulated = ep
    return {
        "path": str(path),
        "schema_version": info[0] if info else schema.SCHEMA_VERSION,
        "spans": spans,
        "spooled_spans": spooled,
        "rejected_spans": rejected,
        "traces": traces,
        "episodes": n_eps,
        "episodes_without_root": rootless,
        "steps": steps,
        "llm_calls": llm,
        "tool_calls": tools,
        "faults_injected": sum(f[1] for f in faults),
        "faults_changed": sum(f[2] for f in faults),
        "episodes_triggered": triggered,
        "success_known": known,
        "success_count": succeeded,
        "success_rate": _rate(succeeded, known),
        "simulated": simulated > 0,
        "simulated_episodes": simulated,
        "faults_by_type": {f[0]: {"injected": f[1], "changed": f[2]} for f in faults},
        "success_by_condition": {
            (c if c is not None else "(none)"): {
                "episodes": n, "known": k, "succeeded": s, "rate": _rate(s, k), "triggered": t}
            for c, n, k, s, t in by_cond
        },
    }


def render_summary(summary: dict[str, Any]) -> str:
    """Plain-text rendering for terminals and logs."""
    s = summary
    lines = [
        f"trace store {s['path']} (schema v{s['schema_version']})"
        + (f"  [SIMULATED MODEL: {s['simulated_episodes']} episode(s)]" if s["simulated"] else ""),
        f"  spans {s['spans']}  traces {s['traces']}  episodes {s['episodes']}"
        f" ({s['episodes_without_root']} without root)  steps {s['steps']}",
        f"  llm calls {s['llm_calls']}  tool calls {s['tool_calls']}",
        f"  faults injected {s['faults_injected']}  changed {s['faults_changed']}"
        f"  triggered episodes {s['episodes_triggered']}",
    ]
    if s.get("spooled_spans"):
        lines.append(f"  {s['spooled_spans']} more spans wait in the spool (loaded by the next write)")
    if s.get("rejected_spans"):
        lines.append(f"  {s['rejected_spans']} spans refused by the database, kept in the rejected file")
    for ftype, c in s["faults_by_type"].items():
        lines.append(f"    {ftype:<16} injected {c['injected']:>6}  changed {c['changed']:>6}")
    rate = "n/a" if s["success_rate"] is None else f"{100 * s['success_rate']:.1f}%"
    lines.append(f"  success {s['success_count']}/{s['success_known']} ({rate})")
    for cond, c in s["success_by_condition"].items():
        r = "n/a" if c["rate"] is None else f"{100 * c['rate']:.1f}%"
        lines.append(f"    {cond:<16} {c['succeeded']:>5}/{c['known']:<5} {r:>7}  episodes {c['episodes']}")
    return "\n".join(lines)


def known_conditions(path: str | os.PathLike[str]) -> list[str]:
    """The conditions the store's episodes were run under, sorted."""
    with open_store(path) as conn:
        rows = conn.execute("SELECT DISTINCT condition FROM episodes WHERE condition IS NOT NULL ORDER BY 1").fetchall()
    return [c for (c,) in rows]


def check_conditions(path: str | os.PathLike[str], conditions: Sequence[str]) -> None:
    """A ``--condition`` filter naming no condition of the store is a mistake, not an empty answer."""
    if not conditions:
        return
    known = known_conditions(path)
    for c in conditions:
        if c not in known:
            raise UsageError(unknown("condition", c, known) if known else
                             f"unknown condition {c!r}; the store records no condition")
