"""The assistant's tools: six local ``function_tool`` tools and four served over MCP (Streamable HTTP).

Both go through ``dispatch``, which runs the tool against the episode's world, records the call in
the episode's event order, and applies the episode's tool fault (an error body, a raised
exception, or the real result transformed).
"""

from __future__ import annotations

import contextvars
import json
import random
from typing import Any

from agents import function_tool
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from benchmarks.blind.round10.forms import ALL_FORMS
from benchmarks.blind.round10.llm_server import EPISODES, LOCK
from benchmarks.blind.round10.world import TABLES, dumps

CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("round10_episode")
WRITES = {"trigger_job_run", "grant_access", "post_alert", "set_dashboard_tile"}


class ToolFailure(Exception):
    """Raised by a local tool: the Agents SDK's default handler shows the model a generic message."""


def _transform(real: dict[str, Any], op: str, rng: random.Random) -> str:
    data = json.loads(json.dumps(real))
    lists = [k for k, v in data.items() if isinstance(v, list) and k != "columns"]
    if op in ("shift", "stale", "date"):
        for k, v in data.items():
            if isinstance(v, int) and not isinstance(v, bool) and k != "partition":
                data[k] = int(v * (1.03 + 0.07 * rng.random())) if op != "stale" else int(v * 0.9)
            if isinstance(v, list):
                for item in (x for x in v if isinstance(x, dict)):
                    for ik, iv in item.items():
                        if isinstance(iv, int) and ik in ("lag", "size"):
                            item[ik] = int(iv * 1.08) + 1
        if op == "date" and "as_of" in data:
            data["as_of"] = "2026-12-05"
        records = [k for k in lists if data[k] and isinstance(data[k][0], dict)]
        if records and op == "stale":   # yesterday's snapshot: one record fewer
            data[records[0]] = data[records[0]][:-1]
    elif op == "entity":
        for k in ("job", "table", "produced_by", "owner"):
            if k in data:
                data[k] = "dbt_" + TABLES[(TABLES.index(data[k][4:]) + 1) % len(TABLES)] if data[k][4:] in TABLES \
                    else data[k] + "_legacy"
        for item in data.get("results", []):
            item["job"] = "dbt_" + TABLES[(TABLES.index(item["table"]) + 1) % len(TABLES)]
        if "row_count" in data:
            data["row_count"] = data["row_count"] + 1000 * (1 + rng.randrange(9))
        for item in data.get("partitions", []):
            item["lag"] += 500
        if data.get("objects"):
            data["objects"].append({"key": data["objects"][0]["key"].replace("part", "part-old"), "size": 1})
    elif op in ("partial", "page", "total", "cutline"):
        k = lists[0] if lists else None
        if k is not None:
            full = len(data[k])
            data[k] = data[k][: max(0, full // 2)]
            if op == "partial":
                data["partial"] = True
            elif op == "page":
                data["nextPageToken"] = "CgxwYXJ0LTAwMDA0"
            elif op == "total":
                data["total"] = full
            else:
                return dumps(data) + f"\n-- output truncated: showing {len(data[k])} of {full} rows --"
    elif op in ("camel", "prefix"):
        ren = {k: ("".join(p.capitalize() if i else p for i, p in enumerate(k.split("_"))) if op == "camel"
                   else f"result_{k}") for k in data}
        data = {ren[k]: v for k, v in data.items()}
        if op == "camel":
            data = {k: ([{("Lag" if ik == "lag" else ik): iv for ik, iv in it.items()} for it in v]
                        if isinstance(v, list) and v and isinstance(v[0], dict) else v) for k, v in data.items()}
    elif op == "strings":
        def conv(v: Any) -> Any:
            if isinstance(v, dict):
                return {k: conv(x) for k, x in v.items()}
            if isinstance(v, list):
                return [conv(x) for x in v]
            return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else v
        data = conv(data)
        if "results" in data:
            data["results"] = [{**r, "job": None, "job_name": r["job"]} for r in data["results"]]
    elif op == "cut":
        text = dumps(data)
        return text[: max(5, int(len(text) * (0.4 + 0.3 * rng.random())))]
    elif op == "unbalanced":
        text = dumps(data)
        return text[:-1].replace("]", "", 1) if "]" in text else text[:-1]
    return dumps(data)


def dispatch(state: Any, tool: str, args: dict[str, Any]) -> tuple[str, bool, dict[str, Any] | None]:
    """(text shown, is an error, structured content) for one call; raises ToolFailure for raised forms."""
    with LOCK:
        n = state.tool_n
        state.tool_n += 1
        state.tool_calls.append((tool, json.dumps(args, sort_keys=True)))
        step = next((i for i, (idx, name) in enumerate(state.pending) if name == tool), None)
        state.current_step = state.pending.pop(step)[0] if step is not None else -1
    fault = state.tool_fault(n, tool, args)
    form = ALL_FORMS[fault.form] if fault else None
    runs = form is None or form.how == "data" or tool not in WRITES or form.label in ("timeout", "connection") \
        or fault.applied
    real = state.world.call(tool, args) if runs else {}
    if form is None:
        return dumps(real), False, real
    obj = args.get("table") or args.get("job") or args.get("topic") or args.get("bucket") or args.get("query") \
        or args.get("dashboard") or "analytics"
    if form.how == "data":
        if form.extra["op"] == "empty":
            return form.text, False, None
        return _transform(real, form.extra["op"], random.Random(n * 7919 + state.seed)), False, None
    text = form.text.replace("{{", "\x00").replace("}}", "\x01").replace("{obj}", str(obj)).replace(
        "{half}", "0").replace("\x00", "{").replace("\x01", "}")
    if form.how == "raise":
        raise ToolFailure(text)
    return text, True, None


def _local(name: str, args: dict[str, Any]) -> str:
    text, _err, _sc = dispatch(CURRENT.get(), name, args)
    return text


@function_tool
async def run_warehouse_query(sql: str) -> str:
    """Run a read-only SQL statement on the warehouse (Databricks SQL / Trino / ClickHouse) and return rows."""
    return _local("run_warehouse_query", {"sql": sql})


@function_tool
def get_table_lineage(table: str) -> str:
    """Upstream tables, producing job and owner of a warehouse table, from the lineage catalog."""
    return _local("get_table_lineage", {"table": table})


@function_tool
async def list_objects(bucket: str, prefix: str) -> str:
    """List the objects under a prefix of an object-storage bucket."""
    return _local("list_objects", {"bucket": bucket, "prefix": prefix})


@function_tool
def get_consumer_lag(topic: str) -> str:
    """Consumer-group lag per partition of a streaming topic."""
    return _local("get_consumer_lag", {"topic": topic})


@function_tool
def post_alert(channel: str, message: str) -> str:
    """Post an alert message to an on-call channel (each call posts a new message)."""
    return _local("post_alert", {"channel": channel, "message": message})


@function_tool
async def grant_access(user: str, table: str, role: str) -> str:
    """Grant a user a role on a table (each call records a new grant)."""
    return _local("grant_access", {"user": user, "table": table, "role": role})


LOCAL_TOOLS = [run_warehouse_query, get_table_lineage, list_objects, get_consumer_lag, post_alert, grant_access]


def _mcp_call(ctx: Any, tool: str, args: dict[str, Any]) -> CallToolResult:
    headers = ctx.headers or {}
    with LOCK:
        state = EPISODES[headers.get("x-episode", "")]
    try:
        text, err, structured = dispatch(state, tool, args)
    except ToolFailure as exc:
        text, err, structured = str(exc), True, None
    if err and text.startswith("{"):
        try:
            structured = json.loads(text)
        except ValueError:
            structured = None
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured,
                          is_error=err)


def build_mcp_server() -> MCPServer:
    server = MCPServer("data-platform")
    ro = ToolAnnotations(read_only_hint=True)

    @server.tool(annotations=ro)
    def search_catalog(query: str, ctx: Context) -> CallToolResult:
        """Search the table catalog (Unity Catalog style) by name; returns tables, owners and producing jobs."""
        return _mcp_call(ctx, "search_catalog", {"query": query})

    @server.tool(annotations=ro)
    def get_job_status(job: str, ctx: Context) -> CallToolResult:
        """Last run of a dbt Cloud / Airflow job."""
        return _mcp_call(ctx, "get_job_status", {"job": job})

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
    def trigger_job_run(job: str, reason: str, ctx: Context) -> CallToolResult:
        """Trigger a new run of a job (each call starts a new run)."""
        return _mcp_call(ctx, "trigger_job_run", {"job": job, "reason": reason})

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True))
    def set_dashboard_tile(dashboard: str, tile: str, value: float, ctx: Context) -> CallToolResult:
        """Set the value shown on a dashboard tile (Superset / Looker)."""
        return _mcp_call(ctx, "set_dashboard_tile", {"dashboard": dashboard, "tile": tile, "value": value})

    return server
