"""The incident-response world one episode runs against, its tools' real behaviour and the task checkers.

Everything here is plain data built from a seeded ``random.Random``: the same seed gives the same services,
alerts, rosters, runbooks, logs and metrics. Tools mutate the world (restarts, pages, incidents, ...) and the
checkers grade the final world and the agent's final answer. No fault lives here: the tools answer the way a
healthy back end would, including their own ordinary errors for bad arguments.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

SERVICES = [
    "checkout-api", "payments-gw", "ledger-writer", "search-indexer", "auth-edge", "notif-fanout",
    "billing-cron", "inventory-sync", "geo-router", "media-transcode", "ratings-svc", "session-store",
    "report-builder", "fraud-scorer", "cart-svc", "pricing-engine", "email-relay", "webhook-dispatch",
    "quota-keeper", "feature-flags", "image-resizer", "audit-trail", "tax-calc", "ml-feature-store",
]
REGIONS = ["eu-west-1", "us-east-2", "ap-southeast-1", "eu-central-1"]
TEAMS = ["payments", "platform", "search", "identity", "growth", "data"]
PEOPLE = [
    ("Søren Kowalczyk", "@soren.k"), ("José Oyelaran", "@jose.o"), ("Zoë Halvorsen", "@zoe.h"),
    ("Kenji Abara", "@kenji.a"), ("Priya Ramaswami", "@priya.r"), ("Łukasz Ferreira", "@lukasz.f"),
    ("Aiko Brandt", "@aiko.b"), ("Björn Sauer", "@bjorn.s"), ("Nadia El-Amin", "@nadia.e"),
    ("Owen Takahashi", "@owen.t"), ("Ayşe Lindqvist", "@ayse.l"), ("Rafael Mbeki", "@rafael.m"),
]
ALERT_ACTIONS = {"HighErrorRate": "restart", "PodCrashLooping": "restart", "HighLatencyP99": "scale",
                 "SaturationCPU": "scale", "BadDeploySLOBurn": "rollback"}

TOOL_SPECS: dict[str, dict[str, Any]] = {
    "list_alerts": {
        "description": "List the currently firing alerts from Alertmanager.",
        "params": {"severity": ("string", "Filter: 'all', 'critical' or 'warning'.")}, "required": [],
        "annotations": {"readOnlyHint": True, "idempotentHint": True}},
    "get_service_status": {
        "description": "Current health of a service: region, replicas, error rate, p99 latency, version.",
        "params": {"service": ("string", "Service name, e.g. 'checkout-api'.")}, "required": ["service"],
        "annotations": {"readOnlyHint": True, "idempotentHint": True}},
    "query_metrics": {
        "description": "Average of a metric for a service over the last N minutes.",
        "params": {"service": ("string", "Service name."),
                   "metric": ("string", "'p99_ms' or 'error_rate'."),
                   "window_minutes": ("integer", "Window length in minutes.")},
        "required": ["service", "metric", "window_minutes"],
        "annotations": {"readOnlyHint": True, "idempotentHint": True}},
    "search_logs": {
        "description": "Search a service's recent log lines for a term.",
        "params": {"service": ("string", "Service name."), "query": ("string", "Search term."),
                   "limit": ("integer", "Maximum number of lines.")},
        "required": ["service", "query"],
        "annotations": {"readOnlyHint": True, "idempotentHint": True}},
    "get_runbook": {
        "description": "Fetch the runbook for an alert name.",
        "params": {"alert_name": ("string", "Alert name, e.g. 'HighErrorRate'.")}, "required": ["alert_name"],
        "annotations": {"readOnlyHint": True, "idempotentHint": True}},
    "get_oncall": {
        "description": "Who is on call for a team right now (primary and secondary).",
        "params": {"team": ("string", "Team name.")}, "required": ["team"],
        "annotations": {"readOnlyHint": True, "idempotentHint": True}},
    "restart_service": {
        "description": "Rolling-restart a service in one region. Not idempotent: every call restarts again.",
        "params": {"service": ("string", "Service name."), "region": ("string", "Region, e.g. 'eu-west-1'.")},
        "required": ["service", "region"],
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}},
    "scale_service": {
        "description": "Set the replica count of a service.",
        "params": {"service": ("string", "Service name."), "replicas": ("integer", "Target replica count.")},
        "required": ["service", "replicas"],
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}},
    "rollback_deploy": {
        "description": "Roll a service back to an earlier version. Not idempotent.",
        "params": {"service": ("string", "Service name."), "to_version": ("string", "Version, e.g. 'v3.4.1'.")},
        "required": ["service", "to_version"],
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}},
    "page_oncall": {
        "description": "Page an on-call engineer by handle. Not idempotent: every call sends a page.",
        "params": {"handle": ("string", "Handle, e.g. '@mira.k'."), "message": ("string", "Page text.")},
        "required": ["handle", "message"],
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}},
    "create_incident": {
        "description": "Open an incident record. Not idempotent: every call opens a new incident.",
        "params": {"title": ("string", "Title."), "severity": ("string", "'sev1' to 'sev4'."),
                   "service": ("string", "Affected service.")},
        "required": ["title", "severity", "service"],
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}},
}
MUTATING = {"restart_service", "scale_service", "rollback_deploy", "page_oncall", "create_incident"}


def json_schema(name: str) -> dict[str, Any]:
    spec = TOOL_SPECS[name]
    props = {k: {"type": t, "description": d} for k, (t, d) in spec["params"].items()}
    return {"type": "object", "properties": props, "required": list(spec["required"])}


@dataclass
class Service:
    name: str
    region: str
    replicas: int
    error_rate: float
    p99_ms: float
    version: str
    healthy: bool
    team: str
    history: list[str]


@dataclass
class World:
    seed: int
    services: dict[str, Service]
    alerts: list[dict[str, Any]]
    runbooks: dict[str, dict[str, Any]]
    oncall: dict[str, dict[str, Any]]
    logs: dict[str, list[dict[str, Any]]]
    incident_base: int
    effects: list[tuple] = field(default_factory=list)

    # ------------------------------------------------------------------ tools (healthy behaviour)
    def _unknown(self, what: str, value: Any) -> dict[str, Any]:
        return {"status": 404, "error": "not_found", "detail": f"no {what} named {value!r}"}

    def list_alerts(self, severity: str = "all") -> Any:
        alerts = [a for a in self.alerts if severity in ("all", "", None) or a["severity"] == severity]
        return {"alerts": alerts, "total": len(alerts)}

    def get_service_status(self, service: str) -> Any:
        s = self.services.get(service)
        if s is None:
            return self._unknown("service", service)
        return {"service": s.name, "region": s.region, "replicas": s.replicas, "error_rate": s.error_rate,
                "p99_ms": s.p99_ms, "version": s.version, "healthy": s.healthy}

    def query_metrics(self, service: str, metric: str, window_minutes: int = 15) -> Any:
        s = self.services.get(service)
        if s is None:
            return self._unknown("service", service)
        if metric not in ("p99_ms", "error_rate"):
            return {"status": 400, "error": "bad_request", "detail": f"unknown metric {metric!r}"}
        avg = s.p99_ms if metric == "p99_ms" else s.error_rate
        rng = random.Random(f"{self.seed}:{service}:{metric}")
        points = [round(avg * (1 + rng.uniform(-0.04, 0.04)), 4) for _ in range(4)]
        return {"service": service, "metric": metric, "window_minutes": int(window_minutes),
                "unit": "ms" if metric == "p99_ms" else "ratio", "points": points, "avg": avg}

    def search_logs(self, service: str, query: str, limit: int = 20) -> Any:
        lines = self.logs.get(service)
        if lines is None:
            return self._unknown("service", service)
        q = (query or "").lower()
        hits = [ln for ln in lines if any(w in ln["msg"].lower() for w in q.split("|") if w)]
        return {"service": service, "hits": hits[: int(limit or 20)], "total": len(hits)}

    def get_runbook(self, alert_name: str) -> Any:
        rb = self.runbooks.get(alert_name)
        if rb is None:
            return self._unknown("runbook", alert_name)
        return rb

    def get_oncall(self, team: str) -> Any:
        r = self.oncall.get(team)
        if r is None:
            return self._unknown("team", team)
        return r

    def restart_service(self, service: str, region: str) -> Any:
        s = self.services.get(service)
        if s is None:
            return self._unknown("service", service)
        if region != s.region:
            return {"status": 409, "error": "conflict", "detail": f"{service} has no deployment in {region}"}
        self.effects.append(("restart", service, region))
        n = sum(1 for e in self.effects if e[0] == "restart")
        return {"restart_id": f"rst-{self.seed % 9000 + 1000}-{n}", "service": service, "region": region,
                "status": "rolling"}

    def scale_service(self, service: str, replicas: int) -> Any:
        s = self.services.get(service)
        if s is None:
            return self._unknown("service", service)
        self.effects.append(("scale", service, int(replicas)))
        return {"service": service, "replicas": int(replicas), "status": "scaling"}

    def rollback_deploy(self, service: str, to_version: str) -> Any:
        s = self.services.get(service)
        if s is None:
            return self._unknown("service", service)
        if to_version not in s.history:
            return {"status": 404, "error": "not_found", "detail": f"{service} was never deployed at {to_version}"}
        self.effects.append(("rollback", service, to_version))
        n = sum(1 for e in self.effects if e[0] == "rollback")
        return {"rollback_id": f"rb-{self.seed % 9000 + 1000}-{n}", "service": service, "to_version": to_version,
                "status": "in_progress"}

    def page_oncall(self, handle: str, message: str) -> Any:
        known = {p["handle"] for r in self.oncall.values() for p in (r["primary"], r["secondary"])}
        if handle not in known:
            return self._unknown("handle", handle)
        n = sum(1 for e in self.effects if e[0] == "page") + 1
        pid = f"pg-{self.seed % 9000 + 1000}-{n}"
        self.effects.append(("page", handle, pid))
        return {"page_id": pid, "handle": handle, "status": "sent"}

    def create_incident(self, title: str, severity: str, service: str) -> Any:
        if severity not in ("sev1", "sev2", "sev3", "sev4"):
            return {"status": 400, "error": "bad_request", "detail": f"unknown severity {severity!r}"}
        n = sum(1 for e in self.effects if e[0] == "incident")
        iid = f"INC-{self.incident_base + n}"
        self.effects.append(("incident", iid, service))
        return {"incident_id": iid, "title": title, "severity": severity, "status": "open"}

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """Run a tool by name with keyword arguments (a TypeError for bad arguments, as Python would)."""
        return getattr(self, name)(**args)

    # ------------------------------------------------------------------ truths for the checkers
    def unhealthy(self) -> list[str]:
        return [a["service"] for a in self.alerts if not self.services[a["service"]].healthy]

    def expected_action(self, alert: dict[str, Any]) -> tuple:
        s = self.services[alert["service"]]
        kind = ALERT_ACTIONS[alert["name"]]
        if kind == "restart":
            return ("restart", s.name, s.region)
        if kind == "scale":
            return ("scale", s.name, s.replicas + 2)
        return ("rollback", s.name, s.history[-2])


def build_world(seed: int, n_alerts: int = 4, unhealthy_share: float = 0.5, sweep: bool = False) -> World:
    """A world whose first alert's service is unhealthy; a sweep world has no rollback alerts."""
    rng = random.Random(seed)
    names = rng.sample(SERVICES, k=min(len(SERVICES), max(n_alerts + 3, 8)))
    services: dict[str, Service] = {}
    for i, name in enumerate(names):
        major, minor = rng.randint(1, 6), rng.randint(0, 19)
        history = [f"v{major}.{minor}.{p}" for p in range(rng.randint(3, 6))]
        healthy = i != 0 and rng.random() > unhealthy_share
        services[name] = Service(
            name=name, region=rng.choice(REGIONS), replicas=rng.randint(3, 12),
            error_rate=round(rng.uniform(0.001, 0.009) if healthy else rng.uniform(0.06, 0.31), 4),
            p99_ms=round(rng.uniform(80, 400) if healthy else rng.uniform(900, 4200), 1),
            version=history[-1], healthy=healthy, team=rng.choice(TEAMS), history=history)
    alert_services = names[:n_alerts]
    alerts = []
    for i, svc in enumerate(alert_services):
        kinds = sorted(k for k, v in ALERT_ACTIONS.items() if not sweep or v != "rollback")
        aname = rng.choice(kinds)
        alerts.append({"id": f"ALR-{rng.randint(1000, 9999)}{i}", "name": aname, "service": svc,
                       "severity": rng.choice(["critical", "warning"]),
                       "started_at": f"2026-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
                                     f"{rng.randint(0, 59):02d}:00Z"})
    runbooks = {}
    for aname, kind in ALERT_ACTIONS.items():
        steps = {"restart": ["Check error budget", "Rolling restart in the affected region", "Watch error rate"],
                 "scale": ["Check CPU and p99", "Scale out by two replicas", "Watch p99 for 10 minutes"],
                 "rollback": ["Find the last good version in deploy logs", "Roll back", "Freeze deploys"]}[kind]
        runbooks[aname] = {"alert": aname, "steps": steps, "action": kind, "owner": rng.choice(TEAMS)}
    people = PEOPLE[:]
    rng.shuffle(people)
    oncall = {}
    for i, team in enumerate(TEAMS):
        p, s = people[(2 * i) % len(people)], people[(2 * i + 1) % len(people)]
        oncall[team] = {"team": team, "primary": {"name": p[0], "handle": p[1]},
                        "secondary": {"name": s[0], "handle": s[1]}, "shift_ends": "2026-03-30T08:00:00Z"}
    hint_for = {a["service"]: ALERT_ACTIONS[a["name"]] for a in alerts}
    logs: dict[str, list[dict[str, Any]]] = {}
    for s in services.values():
        lines = []
        for v in s.history[:-1]:
            lines.append({"ts": f"2026-03-2{rng.randint(0, 8)}T10:00:00Z", "level": "INFO",
                          "msg": f"deploy {v} finished status=ok"})
        bad = "failed readiness" if not s.healthy else "finished status=ok"
        lines.append({"ts": "2026-03-29T09:41:00Z", "level": "WARN" if not s.healthy else "INFO",
                      "msg": f"deploy {s.history[-1]} {bad}"})
        kind = hint_for.get(s.name, "none needed")
        lines.append({"ts": "2026-03-29T09:50:00Z", "level": "INFO",
                      "msg": f"remediation hint from runbook bot: {kind}"})
        lines.append({"ts": "2026-03-29T09:52:11Z", "level": "ERROR" if not s.healthy else "INFO",
                      "msg": "upstream errors climbing" if not s.healthy else "request volume nominal"})
        logs[s.name] = lines
    return World(seed=seed, services=services, alerts=alerts, runbooks=runbooks, oncall=oncall, logs=logs,
                 incident_base=rng.randint(4100, 8800))


# ---------------------------------------------------------------------- checkers
def _answer(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        obj = json.loads(text.strip())
    except (ValueError, TypeError):
        return None
    return obj if isinstance(obj, dict) else None


def _acts(eff: list[tuple]) -> list[tuple]:
    """Remediations in order; repeating the same scale is harmless (idempotent) and counted once."""
    out: list[tuple] = []
    for e in eff:
        if e[0] in ("restart", "rollback") or (e[0] == "scale" and e not in out):
            out.append(e)
    return out


def grade(world: World, task: dict[str, Any], final_text: str | None) -> tuple[bool, str]:
    """Whether the task was done: the world's effects and the final JSON answer, per task type."""
    ans = _answer(final_text)
    eff = world.effects
    kind = task["type"]
    if ans is None:
        return False, "final answer is not a JSON object"
    if kind == "page":
        primary = world.oncall[task["team"]]["primary"]
        want = primary["handle"]
        pages = [e for e in eff if e[0] == "page"]
        if [e[1] for e in pages] != [want]:
            return False, f"pages sent to {[e[1] for e in pages]}, wanted exactly one to {want}"
        if ans.get("paged") != want or ans.get("name") != primary["name"]:
            return False, "answer names the wrong person"
        if ans.get("page_id") != pages[0][2]:
            return False, "answer has the wrong page id"
        return True, "ok"
    if kind == "remediate":
        alert = next(a for a in world.alerts if a["id"] == task["alert_id"])
        want = world.expected_action(alert)
        acts = _acts(eff)
        if acts != [want]:
            return False, f"remediation {acts}, wanted {[want]}"
        incs = [e for e in eff if e[0] == "incident"]
        if len(incs) != 1:
            return False, f"{len(incs)} incidents opened"
        if ans.get("incident_id") != incs[0][1]:
            return False, "answer has the wrong incident id"
        return True, "ok"
    if kind == "report":
        vals = ans.get("values")
        if not isinstance(vals, dict) or set(vals) != set(task["services"]):
            return False, "answer does not list every service"
        for s in task["services"]:
            truth = getattr(world.services[s], task["metric"])
            try:
                v = float(vals[s])
            except (TypeError, ValueError):
                return False, f"value for {s} is not a number"
            if abs(v - truth) > max(abs(truth) * 0.005, 1e-7):
                return False, f"value for {s} is {v}, truth {truth}"
        if eff:
            return False, "a read-only task changed the world"
        return True, "ok"
    if kind == "rollback":
        s = world.services[task["service"]]
        want = ("rollback", s.name, s.history[-2])
        acts = [e for e in eff if e[0] == "rollback"]
        if acts != [want]:
            return False, f"rollbacks {acts}, wanted {[want]}"
        if ans.get("rolled_back_to") != want[2]:
            return False, "answer names the wrong version"
        return True, "ok"
    if kind == "sweep":
        want_acts = sorted(world.expected_action(a) for a in world.alerts if not world.services[a["service"]].healthy)
        acts = sorted(_acts(eff))
        if acts != want_acts:
            return False, f"remediations {acts}, wanted {want_acts}"
        handled = ans.get("handled")
        if not isinstance(handled, list) or sorted(handled) != sorted(a["id"] for a in world.alerts):
            return False, "answer does not list every alert as handled"
        incs = [e for e in eff if e[0] == "incident"]
        if len(incs) != 1 or ans.get("incident_id") != incs[0][1]:
            return False, "summary incident missing, duplicated or misnamed"
        return True, "ok"
    raise ValueError(f"unknown task type {kind}")


def task_prompt(world: World, task: dict[str, Any]) -> str:
    kind = task["type"]
    tail = " When you are done, reply with one JSON object and nothing else."
    if kind == "page":
        return (f"Alert {task['alert_id']} needs a human. Find who is primary on call for the {task['team']} team "
                "and page them once. Answer with {\"paged\": <handle>, \"name\": <their name>, "
                "\"page_id\": <id>}." + tail)
    if kind == "remediate":
        return (f"Alert {task['alert_id']} ({task['alert_name']}) is firing for {task['service']}. Check the "
                "service, follow the alert's runbook exactly once, then open one incident. Answer with "
                "{\"incident_id\": <id>, \"action\": <action>, \"service\": <service>}." + tail)
    if kind == "report":
        names = ", ".join(task["services"])
        return (f"Report the {task['metric']} average over the last 15 minutes for: {names}. Do not change "
                "anything. Answer with {\"metric\": <metric>, \"values\": {<service>: <number>}}." + tail)
    if kind == "rollback":
        return (f"The latest deploy of {task['service']} is bad. Find the last version that deployed with "
                "status=ok in its logs and roll back to it once. Answer with {\"rolled_back_to\": <version>}."
                + tail)
    if kind == "sweep":
        return ("Sweep every firing alert: check each alerting service, remediate the unhealthy ones per the "
                "standard actions (HighErrorRate/PodCrashLooping: restart in its region; HighLatencyP99/"
                "SaturationCPU: scale to replicas+2; BadDeploySLOBurn: roll back one version), then open one "
                "summary incident. Answer with {\"handled\": [<alert ids>], \"remediated\": [<services>], "
                "\"incident_id\": <id>}." + tail)
    raise ValueError(kind)


SYSTEM_PROMPT = ("You are the incident-response assistant of an SRE team. Use the tools; never invent values. "
                 "Finish with a single JSON object exactly as the task asks.")
