"""The nine operations tools: their declarations (Messages API ``tools``) and what they do to the world.

Four are served over MCP (``mcp_server.py``), five are local functions the agent wraps with
``Episode.wrap_tools``. A call with a missing or unknown argument is refused the way a real
handler refuses it (a validation error), which is not a fault: it is what the tool really says.
"""

from __future__ import annotations

from typing import Any

from benchmarks.blind.round4.world import World

MCP_TOOLS = ("get_incident", "update_incident", "query_metrics", "search_logs")
LOCAL_TOOLS = ("list_deployments", "rollback", "scale_service", "page_oncall", "create_ticket")
NON_IDEMPOTENT = ("page_oncall", "create_ticket")

PARAMS: dict[str, dict[str, tuple[str, str]]] = {
    "get_incident": {"incident_id": ("string", "Incident id, e.g. INC-1234")},
    "update_incident": {"incident_id": ("string", "Incident id"),
                        "status": ("string", "investigating | mitigated | resolved | closed"),
                        "note": ("string", "Timeline note")},
    "query_metrics": {"service": ("string", "Service name"), "metric": ("string", "cpu | error_rate")},
    "search_logs": {"service": ("string", "Service name"), "query": ("string", "Log query")},
    "list_deployments": {"service": ("string", "Service name")},
    "rollback": {"service": ("string", "Service name"), "version": ("string", "Version to roll back to")},
    "scale_service": {"service": ("string", "Service name"), "replicas": ("integer", "Desired replicas")},
    "page_oncall": {"team": ("string", "Team to page"), "summary": ("string", "Page summary")},
    "create_ticket": {"title": ("string", "Ticket title"), "priority": ("string", "P1..P4"),
                      "service": ("string", "Service or area")},
}
DESCRIPTIONS = {
    "get_incident": "Fetch an incident record.",
    "update_incident": "Set an incident's status and append a timeline note.",
    "query_metrics": "Query a service metric over the last 15 minutes (8 points).",
    "search_logs": "Search a service's logs; returns the matching hits.",
    "list_deployments": "List a service's deployments, newest first (the first is running).",
    "rollback": "Roll a service back to an earlier deployed version.",
    "scale_service": "Set a service's replica count.",
    "page_oncall": "Page a team's on-call engineer.",
    "create_ticket": "Open a follow-up ticket.",
}


def anthropic_tools() -> list[dict[str, Any]]:
    """The ``tools`` member of every Messages request."""
    return [{"name": name, "description": DESCRIPTIONS[name],
             "input_schema": {"type": "object",
                              "properties": {k: {"type": t, "description": d} for k, (t, d) in p.items()},
                              "required": list(p)}}
            for name, p in PARAMS.items()]


class ToolRefused(Exception):
    """The tool's own refusal (bad arguments, unknown id): real behaviour, not an injected fault."""


def check_args(name: str, args: dict[str, Any]) -> None:
    declared = PARAMS[name]
    unknown = sorted(set(args) - set(declared))
    if unknown:
        raise ToolRefused(f"{name}() got an unexpected keyword argument '{unknown[0]}'")
    missing = [k for k in declared if k not in args]
    if missing:
        raise ToolRefused(f"{name}() missing required argument: '{missing[0]}'")


def run(world: World, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run one tool on the world; raises ``ToolRefused`` as the real tool would."""
    check_args(name, args)
    if name in ("get_incident", "update_incident"):
        inc = world.incidents.get(str(args["incident_id"]))
        if inc is None:
            raise ToolRefused(f"incident {args['incident_id']} not found")
        if name == "update_incident":
            inc.status = str(args["status"])
            inc.notes.append(str(args["note"]))
            return {"id": inc.id, "status": inc.status, "notes": len(inc.notes), "updated": True}
        return {"id": inc.id, "title": inc.title, "severity": inc.severity, "status": inc.status,
                "service": inc.service, "team": inc.team}
    if name == "page_oncall":
        page = {"page_id": f"PG{len(world.pages) + 101}", "team": str(args["team"]), "summary": str(args["summary"])}
        world.pages.append(page)
        return {"page_id": page["page_id"], "team": page["team"], "status": "triggered"}
    if name == "create_ticket":
        ticket = {"key": f"OPS-{len(world.tickets) + 4100}", "title": str(args["title"]),
                  "priority": str(args["priority"]), "service": str(args["service"])}
        world.tickets.append(ticket)
        return {"key": ticket["key"], "title": ticket["title"], "priority": ticket["priority"]}
    svc = world.services.get(str(args["service"]))
    if svc is None:
        raise ToolRefused(f"service '{args['service']}' not found")
    if name == "query_metrics":
        metric = str(args["metric"])
        if metric not in ("cpu", "error_rate"):
            raise ToolRefused(f"unknown metric '{metric}'")
        pts = svc.cpu_points if metric == "cpu" else svc.error_points
        out: dict[str, Any] = {"service": svc.name, "metric": metric, "unit": "percent", "window": "15m",
                               "points": [{"t": f"2026-12-01T10:{2 * i:02d}:00Z", "v": v} for i, v in enumerate(pts)]}
        if metric == "cpu":
            out["replicas"] = svc.replicas
        return out
    if name == "search_logs":
        query = str(args["query"])
        hits = [] if "code:" in query else list(svc.logs)
        return {"service": svc.name, "query": query, "total": len(hits), "hits": hits}
    if name == "list_deployments":
        return {"service": svc.name, "deployments": [dict(d) for d in svc.deployments]}
    if name == "rollback":
        version = str(args["version"])
        idx = next((i for i, d in enumerate(svc.deployments) if d["version"] == version), None)
        if idx is None:
            raise ToolRefused(f"version {version} was never deployed for {svc.name}")
        previous = svc.running
        chosen = svc.deployments.pop(idx)
        svc.deployments.insert(0, dict(chosen, deployed_at="2026-12-01T10:30:00Z"))
        world.rollbacks.append((svc.name, version))
        return {"service": svc.name, "from": previous, "to": version, "status": "rolled_back"}
    if name == "scale_service":
        try:
            replicas = int(args["replicas"])
        except (TypeError, ValueError):
            raise ToolRefused(f"replicas must be an integer, got {args['replicas']!r}") from None
        previous = svc.replicas
        svc.replicas = replicas
        world.scales.append((svc.name, replicas))
        return {"service": svc.name, "replicas": replicas, "previous": previous}
    raise ToolRefused(f"unknown tool {name}")
