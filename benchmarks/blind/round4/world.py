"""The operations world the agent works on: services, deployments, incidents, logs, tickets, pages.

Tasks are graded by the world's final state (and, for triage, the final answer), never by the
trace, so an episode's outcome is independent of how it was traced.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

SERVICES = ("checkout", "payments", "search", "auth", "inventory", "notifications", "catalog",
            "shipping", "ledger", "gateway", "billing", "profile", "media", "pricing", "quotes",
            "reviews", "fraud", "tax")
TEAMS = ("storefront", "money", "discovery", "identity", "fulfilment", "platform")
ERROR_CODES = ("E_DB_POOL", "E_UPSTREAM_5XX", "E_CACHE_MISS_STORM", "E_TLS_HANDSHAKE", "E_OOM_KILLED",
               "E_LOCK_TIMEOUT", "E_SCHEMA_DRIFT", "E_QUOTA")
TARGET_CPU = 60
ERROR_RATE_THRESHOLD = 2.0
PRIORITY = {"sev1": "P1", "sev2": "P2", "sev3": "P3"}


@dataclass
class Service:
    name: str
    team: str
    replicas: int
    cpu_points: list[float]
    error_points: list[float]
    deployments: list[dict[str, str]]          # newest first; the first is running
    logs: list[dict[str, str]] = field(default_factory=list)

    @property
    def running(self) -> str:
        return self.deployments[0]["version"]


@dataclass
class Incident:
    id: str
    service: str
    severity: str
    status: str
    title: str
    team: str
    notes: list[str] = field(default_factory=list)


@dataclass
class World:
    services: dict[str, Service]
    incidents: dict[str, Incident]
    task: dict[str, Any]
    tickets: list[dict[str, Any]] = field(default_factory=list)
    pages: list[dict[str, Any]] = field(default_factory=list)
    rollbacks: list[tuple[str, str]] = field(default_factory=list)
    scales: list[tuple[str, int]] = field(default_factory=list)
    expected: dict[str, Any] = field(default_factory=dict)


def _version(rng: random.Random) -> tuple[int, int, int]:
    return (rng.randint(1, 4), rng.randint(0, 30), rng.randint(0, 9))


def _service(rng: random.Random, name: str, team: str, n_bad: int = 0) -> Service:
    major, minor, patch = _version(rng)
    deployments = []
    for i in range(5):
        v = f"v{major}.{minor + 10 - i}.{(patch + 3 * i) % 10}"
        deployments.append({"version": v, "status": "degraded" if i < n_bad else "healthy",
                            "deployed_at": f"2026-11-{28 - 2 * i:02d}T{9 + i:02d}:{(7 * i) % 60:02d}:00Z"})
    replicas = rng.randint(3, 12)
    base = rng.uniform(35, 55)
    cpu = [round(base + rng.uniform(-5, 5), 1) for _ in range(8)]
    peak = rng.uniform(72, 95)
    while required_replicas(replicas, peak) == required_replicas(replicas, max(cpu[:4])):
        peak += 7.0                                         # a cut series (first half) must change the answer
    cpu[rng.randint(5, 7)] = round(peak, 1)                 # the peak in the window's second half
    err = [round(rng.uniform(0.1, 0.6), 2) for _ in range(8)]
    if n_bad:
        for i in range(5, 8):
            err[i] = round(rng.uniform(4.0, 9.0), 2)
    return Service(name, team, replicas, cpu, err, deployments)


def required_replicas(replicas: int, peak_cpu: float) -> int:
    return max(1, math.ceil(replicas * peak_cpu / TARGET_CPU))


def _logs(rng: random.Random, dominant: str, other: str, n: int = 12) -> list[dict[str, str]]:
    """Hits newest last; the dominant code is concentrated in the second half (a cut keeps the other)."""
    half = n // 2
    codes = [other] * (half - 1) + [dominant] + [dominant] * (n - half)
    return [{"ts": f"2026-12-01T10:{i * 3:02d}:11Z", "level": "error", "code": c,
             "message": f"{c.lower().replace('_', ' ')} on request {rng.randrange(10**5, 10**6)}"}
            for i, c in enumerate(codes)]


def build_world(kind: str, rng: random.Random, size: int) -> World:
    """A fresh world for one task; ``size`` is the number of items of the long tasks."""
    names = rng.sample(SERVICES, k=min(len(SERVICES), max(size, 3)))
    services = {n: _service(rng, n, rng.choice(TEAMS)) for n in names}
    incidents: dict[str, Incident] = {}
    task: dict[str, Any] = {"kind": kind}
    world = World(services, incidents, task)
    if kind == "rollback":
        svc = names[0]
        services[svc] = _service(rng, svc, services[svc].team, n_bad=rng.choice((1, 2)))
        iid = f"INC-{rng.randrange(1000, 9999)}"
        incidents[iid] = Incident(iid, svc, rng.choice(("sev1", "sev2")), "investigating",
                                  f"Elevated 5xx on {svc}", services[svc].team)
        good = next(d["version"] for d in services[svc].deployments if d["status"] == "healthy")
        task.update(incident=iid)
        world.expected = {"service": svc, "version": good, "incident": iid}
    elif kind == "triage":
        svc = names[0]
        dominant, other = rng.sample(ERROR_CODES, 2)
        services[svc].logs = _logs(rng, dominant, other)
        iid = f"INC-{rng.randrange(1000, 9999)}"
        incidents[iid] = Incident(iid, svc, rng.choice(("sev1", "sev2", "sev3")), "investigating",
                                  f"Errors reported on {svc}", rng.choice(TEAMS))
        task.update(incident=iid, service=svc)
        world.expected = {"code": dominant, "team": incidents[iid].team,
                          "priority": PRIORITY[incidents[iid].severity], "incident": iid}
    elif kind == "capacity":
        chosen = names[:size]
        task.update(services=chosen, target_cpu=TARGET_CPU)
        world.expected = {"replicas": {n: required_replicas(services[n].replicas, max(services[n].cpu_points))
                                       for n in chosen}}
    elif kind == "postmortem":
        ids = []
        for i in range(size):
            iid = f"INC-{rng.randrange(1000, 9999)}{i}"
            svc = names[i % len(names)]
            status = "resolved" if i == 0 or rng.random() < 0.6 else "investigating"
            incidents[iid] = Incident(iid, svc, rng.choice(("sev2", "sev3")), status,
                                      f"Incident on {svc}", services[svc].team)
            ids.append(iid)
        task.update(incidents=ids)
        world.expected = {"closed": sorted(i for i in ids if incidents[i].status == "resolved")}
    else:
        raise ValueError(kind)
    return world


def grade(world: World, final_text: str) -> bool:
    """Whether the task is done, read from the world's final state."""
    kind = world.task["kind"]
    exp = world.expected
    if kind == "rollback":
        svc = world.services[exp["service"]]
        inc = world.incidents[exp["incident"]]
        return (svc.running == exp["version"] and len(world.rollbacks) == 1
                and inc.status == "mitigated" and any(exp["version"] in n for n in inc.notes))
    if kind == "triage":
        return (len(world.pages) == 1 and world.pages[0]["team"] == exp["team"]
                and exp["code"] in world.pages[0]["summary"] and len(world.tickets) == 1
                and world.tickets[0]["priority"] == exp["priority"] and exp["code"] in world.tickets[0]["title"]
                and exp["code"] in final_text)
    if kind == "capacity":
        ok = all(world.services[n].replicas == r for n, r in exp["replicas"].items())
        return ok and len(world.tickets) == 1
    if kind == "postmortem":
        closed = sorted(i for i, inc in world.incidents.items() if inc.status == "closed")
        return closed == exp["closed"] and len(world.tickets) == 1
    raise ValueError(kind)
