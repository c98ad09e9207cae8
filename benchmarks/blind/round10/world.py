"""The data platform the assistant works on: one SQLite world per episode, its tools and its grading.

The tools answer from the world and change it (``trigger_job_run``, ``grant_access`` and
``post_alert`` are not idempotent: a repeat takes effect twice). A task is graded only by the
world's final state, never by what the model said.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass, field
from typing import Any

TABLES = ["orders_daily", "sessions_raw", "customers_dim", "payments_fact", "inventory_snap", "events_clean",
          "churn_scores", "ad_spend", "returns_fact", "web_vitals", "fx_rates", "shipments", "ledger_gl",
          "support_tickets"]
TOPICS = ["clickstream.v2", "orders.cdc", "payments.events", "inventory.updates", "iot.telemetry"]
BUCKETS = ["raw-landing", "lake-bronze", "exports-partner"]
USERS = ["mchen", "apatel", "lnovak", "okafor", "rsilva", "tkato"]
DASHBOARDS = ["exec-kpis", "pipeline-health", "storage-costs"]


@dataclass
class Action:
    """One tool call the task needs: ``args`` may name earlier results as ``{name}``."""

    tool: str
    args: dict[str, Any]
    key: str            # the member of the result the model reads ("" when it reads nothing)
    save: str = ""      # memory name for the value read
    kind: str = "scalar"  # scalar | list | write


@dataclass
class World:
    seed: int
    db: sqlite3.Connection = field(init=False)

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        c = self.db
        c.executescript("""
            CREATE TABLE tables(name TEXT PRIMARY KEY, row_count INT, owner TEXT, job TEXT, upstream TEXT);
            CREATE TABLE topics(name TEXT, partition INT, lag INT);
            CREATE TABLE objects(bucket TEXT, key TEXT, size INT);
            CREATE TABLE runs(job TEXT, reason TEXT);
            CREATE TABLE grants(user TEXT, tbl TEXT, role TEXT);
            CREATE TABLE alerts(channel TEXT, message TEXT);
            CREATE TABLE tiles(dashboard TEXT, tile TEXT, value REAL);
        """)
        for i, t in enumerate(TABLES):
            c.execute("INSERT INTO tables VALUES (?,?,?,?,?)",
                      (t, rng.randrange(10_000, 9_000_000), rng.choice(USERS), f"dbt_{t}",
                       TABLES[(i + 1) % len(TABLES)]))
        for tp in TOPICS:
            for p in range(rng.randrange(3, 7)):
                c.execute("INSERT INTO topics VALUES (?,?,?)", (tp, p, rng.randrange(0, 40_000)))
        for b in BUCKETS:
            for pfx in ("2026/12/04/", "2026/12/05/", "2026/12/06/"):
                for k in range(rng.randrange(2, 9)):
                    c.execute("INSERT INTO objects VALUES (?,?,?)",
                              (b, f"{pfx}part-{k:05d}.parquet", rng.randrange(1_000_000, 900_000_000)))

    # ---- read tools -------------------------------------------------------------------------
    def run_warehouse_query(self, sql: str) -> dict[str, Any]:
        table = sql.strip().rstrip(";").split()[-1]
        row = self.db.execute("SELECT row_count FROM tables WHERE name=?", (table,)).fetchone()
        if row is None:
            return {"error": f"table {table} not found"}
        return {"columns": ["row_count"], "row_count": row[0], "table": table, "as_of": "2026-12-06"}

    def get_table_lineage(self, table: str) -> dict[str, Any]:
        row = self.db.execute("SELECT upstream, job, owner FROM tables WHERE name=?", (table,)).fetchone()
        if row is None:
            return {"error": f"unknown table {table}"}
        return {"table": table, "upstream": [row[0]], "produced_by": row[1], "owner": row[2]}

    def list_objects(self, bucket: str, prefix: str) -> dict[str, Any]:
        rows = self.db.execute("SELECT key, size FROM objects WHERE bucket=? AND key LIKE ? ORDER BY key",
                               (bucket, prefix + "%")).fetchall()
        return {"bucket": bucket, "prefix": prefix, "objects": [{"key": k, "size": s} for k, s in rows]}

    def get_consumer_lag(self, topic: str) -> dict[str, Any]:
        rows = self.db.execute("SELECT partition, lag FROM topics WHERE name=? ORDER BY partition",
                               (topic,)).fetchall()
        return {"topic": topic, "group": "sink-connector", "partitions": [{"partition": p, "lag": g} for p, g in rows]}

    def search_catalog(self, query: str) -> dict[str, Any]:
        rows = self.db.execute("SELECT name, owner, job FROM tables WHERE name LIKE ? ORDER BY name",
                               (f"%{query}%",)).fetchall()
        return {"results": [{"table": n, "owner": o, "job": j} for n, o, j in rows]}

    def get_job_status(self, job: str) -> dict[str, Any]:
        n = self.db.execute("SELECT count(*) FROM runs WHERE job=?", (job,)).fetchone()[0]
        return {"job": job, "last_run": {"state": "success" if n else "failed", "finished_at": "2026-12-06T03:10:00Z"}}

    # ---- write tools (not idempotent except the tile) ----------------------------------------
    def trigger_job_run(self, job: str, reason: str) -> dict[str, Any]:
        self.db.execute("INSERT INTO runs VALUES (?,?)", (job, reason))
        n = self.db.execute("SELECT count(*) FROM runs").fetchone()[0]
        return {"run_id": 880000 + n, "job": job, "state": "queued"}

    def grant_access(self, user: str, table: str, role: str) -> dict[str, Any]:
        self.db.execute("INSERT INTO grants VALUES (?,?,?)", (user, table, role))
        return {"granted": True, "user": user, "table": table, "role": role}

    def post_alert(self, channel: str, message: str) -> dict[str, Any]:
        self.db.execute("INSERT INTO alerts VALUES (?,?)", (channel, message))
        return {"ok": True, "channel": channel, "ts": "1733454775.000200"}

    def set_dashboard_tile(self, dashboard: str, tile: str, value: float) -> dict[str, Any]:
        self.db.execute("DELETE FROM tiles WHERE dashboard=? AND tile=?", (dashboard, tile))
        self.db.execute("INSERT INTO tiles VALUES (?,?,?)", (dashboard, tile, float(value)))
        return {"dashboard": dashboard, "tile": tile, "value": value, "updated": True}

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return getattr(self, tool)(**args)

    def q(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return self.db.execute(sql, params).fetchall()


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "))
