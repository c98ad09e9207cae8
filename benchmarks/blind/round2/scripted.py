"""The scripted model: what an assistant would say next, given the conversation so far.

A playbook is a generator per task type. It yields ``ToolCall`` or ``Final`` and receives an ``Obs`` (the tool
result text as the conversation shows it). The model is stateless across HTTP requests: every request replays the
playbook over the conversation's earlier tool results and returns the next action, so an SDK retry of the same
request gets the same answer. How the model reacts to a result that is not what it expected (retry, give up,
fall back to another tool, skip the item, or read what it can) is set per call by the episode's scenario, keyed by
``"<tool>#<n>"`` (the n-th call of that tool). Quirks are the model's own mistakes, for the unfaulted failures.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolCall:
    name: str
    args: dict[str, Any]
    raw_args: str | None = None  # set when the model writes arguments that are not JSON
    lead: str | None = None      # a short sentence before the call (Anthropic style)

    def args_text(self) -> str:
        return self.raw_args if self.raw_args is not None else json.dumps(self.args, separators=(", ", ": "))


@dataclass
class Final:
    text: str
    gave_up: bool = False


@dataclass
class Obs:
    text: str
    is_error: bool = False
    args: dict[str, Any] | None = None


@dataclass
class Res:
    ok: bool
    data: Any
    obs: Obs | None
    reaction: str = "ok"


class GiveUp(Exception):
    pass


REQUIRED = {
    "list_alerts": ("alerts",), "get_service_status": ("healthy", "region", "replicas"),
    "query_metrics": ("avg",), "search_logs": ("hits",), "get_runbook": ("action",),
    "get_oncall": ("primary",), "restart_service": ("restart_id",), "scale_service": ("status",),
    "rollback_deploy": ("rollback_id",), "page_oncall": ("page_id",), "create_incident": ("incident_id",),
}


def parse(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def valid(name: str, data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    if name == "get_oncall":
        return isinstance(data.get("primary"), dict) and "handle" in data["primary"]
    if name == "list_alerts":
        return isinstance(data.get("alerts"), list)
    if name == "search_logs":
        return isinstance(data.get("hits"), list)
    if name == "scale_service":
        return data.get("status") == "scaling" and "replicas" in data
    return all(k in data for k in REQUIRED.get(name, ()))


def short(text: str, n: int = 90) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= n else t[: n - 3] + "..."


@dataclass
class Model:
    task: dict[str, Any]
    reactions: dict[str, str] = field(default_factory=dict)
    quirk: dict[str, Any] | None = None
    counts: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def q(self, name: str) -> bool:
        return bool(self.quirk) and self.quirk.get("kind") == name

    def call(self, name: str, args: dict[str, Any], raw_args: str | None = None,
             lead: str | None = None) -> Generator[Any, Obs, Res]:
        tries = 0
        while True:
            self.counts[name] += 1
            key = f"{name}#{self.counts[name]}"
            obs = yield ToolCall(name, dict(args), raw_args=raw_args, lead=lead)
            data = parse(obs.text)
            if valid(name, data) and not obs.is_error:
                return Res(True, data, obs)
            reaction = self.reactions.get(key, "giveup")
            tries += 1
            if reaction == "retry" and tries < 4:
                raw_args = None
                continue
            if reaction == "accept":
                return Res(False, data if isinstance(data, dict) else {}, obs, "accept")
            if reaction in ("skip", "fallback"):
                return Res(False, None, obs, reaction)
            raise GiveUp(f"the {name} call did not give me usable data ({short(obs.text)})")


def _num(x: Any) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------- playbooks
def pb_page(m: Model) -> Generator[Any, Obs, Final]:
    t = m.task
    if m.q("ghost_tool"):
        r = yield from m.call("get_pager_schedule", {"team": t["team"]})
    if m.q("empty_args"):
        r = yield from m.call("get_oncall", {})
    team = t["team"] + ("s" if m.q("typo_arg") else "")
    r = yield from m.call("get_oncall", {"team": team}, lead="Let me look up the on-call roster.")
    if m.q("give_up_early"):
        raise GiveUp("the roster shows two people and I am not sure which one should be paged")
    who = "secondary" if m.q("wrong_pick") else "primary"
    person = (r.data or {}).get(who) if isinstance(r.data, dict) else None
    if not isinstance(person, dict) or not person.get("handle"):
        raise GiveUp(f"the roster for {t['team']} does not say who the {who} on-call is")
    handle, name = person["handle"], person.get("name")
    msg = f"{t['alert_id']} needs attention (paged by the incident assistant)"
    raw = None
    if m.q("bad_json_args"):
        raw = "{'handle': '" + handle + "', 'message': '" + msg + "'}"
    p = yield from m.call("page_oncall", {"handle": handle, "message": msg}, raw_args=raw,
                          lead=f"Paging {handle}.")
    pid = p.data.get("page_id") if isinstance(p.data, dict) else None
    if not p.ok and p.reaction != "accept":
        raise GiveUp("the page did not go out")
    if m.q("prose_final"):
        return Final(f"Done - I paged {name} ({handle}) for {t['alert_id']}, page {pid}.")
    return Final(json.dumps({"paged": handle, "name": name, "page_id": pid}, ensure_ascii=False))


def _decide_action(m: Model, alert_name: str, service: str) -> Generator[Any, Obs, str | None]:
    rb = yield from m.call("get_runbook", {"alert_name": alert_name}, lead="Checking the runbook.")
    if rb.ok:
        return rb.data["action"]
    if rb.reaction == "accept" and isinstance(rb.data, dict):
        return rb.data.get("action")
    # fallback: the runbook bot leaves its hint in the service logs
    lg = yield from m.call("search_logs", {"service": service, "query": "remediation hint", "limit": 5},
                           lead="The runbook is unavailable; looking for the runbook bot's hint in the logs.")
    hits = lg.data.get("hits") if isinstance(lg.data, dict) else None
    for h in hits or []:
        msg = h.get("msg", "") if isinstance(h, dict) else ""
        for kind in ("restart", "scale", "rollback"):
            if msg.endswith(kind):
                return kind
    raise GiveUp("neither the runbook nor the logs tell me what remediation to apply")


def pb_remediate(m: Model) -> Generator[Any, Obs, Final]:
    t = m.task
    svc = t["service"]
    st = yield from m.call("get_service_status", {"service": svc + ("-svc" if m.q("typo_arg") else "")},
                           lead=f"First I'll check {svc}.")
    if not st.ok:
        if st.reaction == "fallback":
            mt = yield from m.call("query_metrics", {"service": svc, "metric": "error_rate", "window_minutes": 15})
            st = Res(mt.ok, {"region": t.get("region"), "replicas": None, "healthy": False}, mt.obs)
        elif not isinstance(st.data, dict):
            raise GiveUp(f"I could not read the status of {svc}")
    status = st.data or {}
    kind = yield from _decide_action(m, t["alert_name"], svc)
    if m.q("give_up_early"):
        raise GiveUp(f"the runbook says {kind} but I do not want to touch production without a human")
    region = status.get("region")
    if kind == "restart":
        args = {"service": svc, "region": region}
        if m.q("missing_arg"):
            args = {"service": svc}
        r = yield from m.call("restart_service", args, lead=f"Restarting {svc} in {region}.")
        if m.q("double_action"):
            r = yield from m.call("restart_service", args, lead="Restarting once more to be sure.")
    elif kind == "scale":
        reps = _num(status.get("replicas"))
        if reps is None:
            raise GiveUp(f"I do not know how many replicas {svc} runs, so I cannot scale it")
        target = int(reps) + (3 if m.q("arith") else 2)
        r = yield from m.call("scale_service", {"service": svc, "replicas": target}, lead=f"Scaling to {target}.")
    elif kind == "rollback":
        ver = yield from _good_version(m, svc)
        r = yield from m.call("rollback_deploy", {"service": svc, "to_version": ver}, lead=f"Rolling back to {ver}.")
    else:
        raise GiveUp(f"the runbook action {kind!r} is not one I can apply")
    if not r.ok and r.reaction != "accept":
        raise GiveUp(f"the {kind} did not go through")
    inc = yield from m.call("create_incident", {"title": f"{t['alert_name']} on {svc}", "severity": "sev2",
                                                "service": svc}, lead="Opening the incident.")
    iid = inc.data.get("incident_id") if isinstance(inc.data, dict) else None
    if m.q("prose_final"):
        return Final(f"I applied the runbook ({kind}) to {svc} and opened {iid}.")
    return Final(json.dumps({"incident_id": iid, "action": kind, "service": svc}))


def _good_version(m: Model, svc: str) -> Generator[Any, Obs, str]:
    lg = yield from m.call("search_logs", {"service": svc, "query": "deploy", "limit": 20},
                           lead="Looking for the last good deploy.")
    hits = lg.data.get("hits") if isinstance(lg.data, dict) else None
    oks = []
    for h in hits or []:
        msg = h.get("msg", "") if isinstance(h, dict) else ""
        if msg.startswith("deploy ") and msg.endswith("status=ok"):
            oks.append(msg.split()[1])
    if not oks:
        raise GiveUp(f"I found no successful deploy of {svc} in the logs")
    if m.q("wrong_version"):
        return oks[0]
    return oks[-1]


def pb_report(m: Model) -> Generator[Any, Obs, Final]:
    t = m.task
    vals: dict[str, Any] = {}
    for i, svc in enumerate(t["services"]):
        mt = yield from m.call("query_metrics", {"service": svc, "metric": t["metric"], "window_minutes": 15},
                               lead=f"Querying {svc}.")
        if mt.ok:
            vals[svc] = mt.data["avg"]
        elif mt.reaction == "fallback":
            st = yield from m.call("get_service_status", {"service": svc}, lead="Falling back to the status API.")
            vals[svc] = st.data.get(t["metric"]) if isinstance(st.data, dict) else None
        elif mt.reaction == "accept":
            vals[svc] = (mt.data or {}).get("avg")
        else:
            vals[svc] = None
        if m.q("give_up_early") and i == 1:
            raise GiveUp("the numbers look inconsistent between services, I would rather not report them")
    if m.q("arith") and len(vals) >= 2:
        a, b = list(vals)[:2]
        vals[a], vals[b] = vals[b], vals[a]
    if m.q("prose_final"):
        return Final("Here are the numbers: " + ", ".join(f"{k} {v}" for k, v in vals.items()))
    return Final(json.dumps({"metric": t["metric"], "values": vals}))


def pb_rollback(m: Model) -> Generator[Any, Obs, Final]:
    svc = m.task["service"]
    ver = yield from _good_version(m, svc)
    if m.q("give_up_early"):
        raise GiveUp(f"{ver} looks like the last good version but I would rather have a human confirm the rollback")
    r = yield from m.call("rollback_deploy", {"service": svc, "to_version": ver}, lead=f"Rolling back to {ver}.")
    if m.q("double_action"):
        r = yield from m.call("rollback_deploy", {"service": svc, "to_version": ver}, lead="Once more.")
    if not r.ok and r.reaction != "accept":
        raise GiveUp("the rollback did not go through")
    if m.q("prose_final"):
        return Final(f"Rolled {svc} back to {ver}.")
    return Final(json.dumps({"rolled_back_to": ver}))


SWEEP_ACTION = {"HighErrorRate": "restart", "PodCrashLooping": "restart", "HighLatencyP99": "scale",
                "SaturationCPU": "scale"}


def pb_sweep(m: Model) -> Generator[Any, Obs, Final]:
    al = yield from m.call("list_alerts", {"severity": "all"}, lead="Listing firing alerts.")
    alerts = (al.data or {}).get("alerts") if isinstance(al.data, dict) else None
    if not isinstance(alerts, list):
        raise GiveUp("I could not read the alert list")
    handled, remediated = [], []
    skipped_once = False
    for a in alerts:
        if not isinstance(a, dict):
            continue
        svc = a.get("service")
        st = yield from m.call("get_service_status", {"service": svc}, lead=f"Checking {svc}.")
        if st.reaction == "skip":
            m.notes.append(f"{a.get('id')}: status unavailable")
            continue
        data = st.data if isinstance(st.data, dict) else {}
        healthy = data.get("healthy", True)
        if healthy is False:
            if m.q("skip_one") and not skipped_once:
                skipped_once = True
                handled.append(a.get("id"))
                continue
            kind = SWEEP_ACTION.get(a.get("name"), "restart")
            if kind == "restart":
                r = yield from m.call("restart_service", {"service": svc, "region": data.get("region")},
                                      lead=f"Restarting {svc}.")
            else:
                reps = _num(data.get("replicas"))
                if reps is None:
                    m.notes.append(f"{a.get('id')}: replica count unreadable")
                    continue
                r = yield from m.call("scale_service", {"service": svc, "replicas": int(reps) + 2},
                                      lead=f"Scaling {svc}.")
            if r.reaction == "skip":
                m.notes.append(f"{a.get('id')}: {kind} failed")
                continue
            remediated.append(svc)
        handled.append(a.get("id"))
    inc = yield from m.call("create_incident", {"title": f"Alert sweep: {len(remediated)} services remediated",
                                                "severity": "sev3", "service": "multiple"},
                            lead="Opening the summary incident.")
    iid = inc.data.get("incident_id") if isinstance(inc.data, dict) else None
    if m.q("prose_final"):
        return Final(f"Sweep done: handled {len(handled)} alerts, remediated {', '.join(remediated)}; {iid}.")
    out = {"handled": handled, "remediated": remediated, "incident_id": iid}
    if m.notes:
        out["notes"] = m.notes
    return Final(json.dumps(out))


def pb_loop(m: Model) -> Generator[Any, Obs, Final]:
    svc = m.task.get("service") or (m.task.get("services") or ["checkout-api"])[0]
    while True:
        yield from m.call("get_service_status", {"service": svc}, lead="Checking again.")


PLAYBOOKS = {"page": pb_page, "remediate": pb_remediate, "report": pb_report, "rollback": pb_rollback,
             "sweep": pb_sweep}


def _run(m: Model) -> Generator[Any, Obs, None]:
    pb = pb_loop if m.q("loop") else PLAYBOOKS[m.task["type"]]
    try:
        final = yield from pb(m)
    except GiveUp as g:
        final = Final(f"I could not finish this task: {g}. Please escalate to a human.", gave_up=True)
    while True:
        yield final


def decide(task: dict[str, Any], reactions: dict[str, str], quirk: dict[str, Any] | None,
           turns: list[dict[str, Any]]) -> tuple[Any, Model]:
    """The next action after the given earlier turns.

    ``turns`` lists the conversation's assistant turns in order, each ``{"origin": "model" | "foreign",
    "results": [Obs, ...]}``: a foreign turn (an earlier response replayed by a cache) is not the model's own
    and its results are not fed to the playbook; a turn with no result (a final answer) feeds nothing.
    """
    m = Model(task=task, reactions=dict(reactions), quirk=quirk)
    gen = _run(m)
    action = next(gen)
    for turn in turns:
        if turn.get("origin") == "foreign":
            continue
        for obs in turn.get("results", []):
            if not isinstance(action, ToolCall):
                break
            action = gen.send(obs)
    return action, m
