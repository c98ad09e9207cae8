"""The SIMULATED model: it plays the agent's side of the conversation, deterministically.

It reads the whole request (the task in the first user message, then every tool_use and
tool_result so far) and answers with the next step of a fixed procedure per task kind, as a
generator replayed over the conversation. It believes what the tools tell it: a wrong or stale
value is used as given, a partial result is used as if complete. A result it cannot read (an
error text, renamed keys, empty or broken JSON) is retried once when the episode's temperament
says so, then the item is skipped (long tasks) or the task given up. Its own slips (giving up, a
wrong computation, a malformed or unknown tool call, prose instead of a call) are scheduled by
the episode's plan.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from benchmarks.blind.round4.world import ERROR_RATE_THRESHOLD, PRIORITY, required_replicas


@dataclass
class Call:
    name: str
    input: dict[str, Any]
    text: str = ""


@dataclass
class Final:
    text: str


@dataclass
class Obs:
    text: str
    is_error: bool


@dataclass
class Temper:
    retry: bool = True  # retry an unreadable result once with the same arguments
    skip: bool = False  # in long tasks, skip an item that failed instead of giving up
    narrow_first: bool = False  # triage: first search with a narrow query (finds nothing), then broaden
    slips: dict[int, str] = field(default_factory=dict)  # turn -> slip kind


Policy = Generator[Call | Final, Obs, None]


ERROR_MEMBERS = ("error", "errors", "errorMessages", "__type", "errorType")


def _read(obs: Obs, *keys: str) -> dict[str, Any] | None:
    if obs.is_error:
        return None
    try:  # a JSON value, whatever trails it (a note line, a footer)
        data, _end = json.JSONDecoder().raw_decode(obs.text.strip())
    except ValueError:
        return None
    if not isinstance(data, dict) or any(k not in data for k in keys):
        return None
    if any(k in data for k in ERROR_MEMBERS) or data.get("kind") == "Status":
        return None  # an error body, whatever else it carries
    return data


def _fetch(call: Call, temper: Temper, *keys: str) -> Generator[Call | Final, Obs, dict[str, Any] | None]:
    obs = yield call
    data = _read(obs, *keys)
    if data is None and temper.retry:
        obs = yield Call(call.name, dict(call.input), "That result was not usable; trying the same call again.")
        data = _read(obs, *keys)
    return data


def _peak(data: dict[str, Any]) -> float:
    return max(float(p["v"]) for p in data["points"])


def rollback(task: dict[str, Any], t: Temper) -> Policy:
    iid = task["incident"]
    inc = yield from _fetch(Call("get_incident", {"incident_id": iid}, f"Let me look at {iid} first."), t, "service")
    if inc is None:
        yield Final(f"I could not read incident {iid}, so I am stopping here and leaving it for a human.")
        return
    svc = inc["service"]
    deps = yield from _fetch(
        Call("list_deployments", {"service": svc}, f"Checking recent deployments of {svc}."), t, "deployments"
    )
    if deps is None or not deps["deployments"]:
        yield Final(f"I could not get the deployment history of {svc}; no rollback done.")
        return
    m = yield from _fetch(
        Call("query_metrics", {"service": svc, "metric": "error_rate"}, "Confirming the error rate before acting."),
        t,
        "points",
    )
    if m is None:
        yield Final(f"The error-rate query for {svc} failed, so I cannot confirm the regression. Escalating.")
        return
    if _peak(m) < ERROR_RATE_THRESHOLD:
        yield Final(
            f"The error rate of {svc} peaks at {_peak(m):.2f}%, below the {ERROR_RATE_THRESHOLD}% threshold: "
            "no rollback needed."
        )
        return
    rows = deps["deployments"]
    target = next((d["version"] for d in rows[1:] if d.get("status") == "healthy"), rows[-1]["version"])
    r = yield from _fetch(
        Call(
            "rollback", {"service": svc, "version": target}, f"The error rate is high; rolling {svc} back to {target}."
        ),
        t,
        "status",
    )
    if r is None:
        yield Final(f"The rollback of {svc} to {target} did not go through. Escalating to the owning team.")
        return
    u = yield from _fetch(
        Call(
            "update_incident",
            {"incident_id": iid, "status": "mitigated", "note": f"Rolled back {svc} to {target}"},
            "Recording the mitigation on the incident.",
        ),
        t,
        "status",
    )
    if u is None:
        yield Final(f"Rolled back {svc} to {target}, but I could not update {iid}.")
        return
    yield Final(f"Rolled back {svc} to {target} and marked {iid} mitigated.")


def triage(task: dict[str, Any], t: Temper) -> Policy:
    svc, iid = task["service"], task["incident"]
    query = "level:error code:HTTP_5XX" if t.narrow_first else "level:error"
    logs = yield from _fetch(
        Call("search_logs", {"service": svc, "query": query}, f"Searching {svc} error logs."), t, "hits"
    )
    if logs is not None and not logs["hits"] and t.narrow_first:
        logs = yield from _fetch(
            Call(
                "search_logs",
                {"service": svc, "query": "level:error"},
                "Nothing for that narrow query; broadening the search.",
            ),
            t,
            "hits",
        )
    if logs is None or not logs["hits"]:
        yield Final(f"I could not retrieve error logs for {svc}; stopping the triage here.")
        return
    code = Counter(h["code"] for h in logs["hits"]).most_common(1)[0][0]
    inc = yield from _fetch(
        Call("get_incident", {"incident_id": iid}, f"The dominant error is {code}. Reading {iid}."),
        t,
        "team",
        "severity",
    )
    if inc is None:
        yield Final(f"Dominant error on {svc} is {code}, but I could not read {iid} to route it.")
        return
    p = yield from _fetch(
        Call("page_oncall", {"team": inc["team"], "summary": f"{iid}: {code} on {svc}"}, f"Paging {inc['team']}."),
        t,
        "page_id",
    )
    if p is None:
        yield Final(f"I could not page {inc['team']} about {code}.")
        return
    priority = PRIORITY.get(inc["severity"], "P3")
    k = yield from _fetch(
        Call(
            "create_ticket",
            {"title": f"{code} on {svc}", "priority": priority, "service": svc},
            "Opening the follow-up ticket.",
        ),
        t,
        "key",
    )
    if k is None:
        yield Final(f"Paged {inc['team']} about {code}, but the follow-up ticket could not be created.")
        return
    yield Final(
        f"Dominant error on {svc}: {code}. Paged {inc['team']} ({p['page_id']}), opened {k['key']} at {priority}."
    )


def capacity(task: dict[str, Any], t: Temper) -> Policy:
    done, skipped = [], []
    for svc in task["services"]:
        m = yield from _fetch(
            Call("query_metrics", {"service": svc, "metric": "cpu"}, f"CPU for {svc}."), t, "points", "replicas"
        )
        if m is None:
            if t.skip:
                skipped.append(svc)
                continue
            yield Final(f"I could not read the CPU metrics of {svc}; stopping the capacity review.")
            return
        want = required_replicas(int(m["replicas"]), _peak(m))
        s = yield from _fetch(
            Call(
                "scale_service",
                {"service": svc, "replicas": want},
                f"{svc} peaks at {_peak(m):.1f}% CPU on {m['replicas']} replicas: scaling to {want}.",
            ),
            t,
            "replicas",
        )
        if s is None:
            if t.skip:
                skipped.append(svc)
                continue
            yield Final(f"Scaling {svc} failed; stopping the capacity review.")
            return
        done.append(f"{svc}={want}")
    k = yield from _fetch(
        Call(
            "create_ticket",
            {"title": f"Capacity review: {len(done)} services scaled", "priority": "P4", "service": "platform"},
            "Filing the review.",
        ),
        t,
        "key",
    )
    note = f" Skipped: {', '.join(skipped)}." if skipped else ""
    if k is None:
        yield Final(f"Scaled {', '.join(done)}; the review ticket could not be filed.{note}")
        return
    yield Final(f"Capacity review done: {', '.join(done)}. Ticket {k['key']}.{note}")


def postmortem(task: dict[str, Any], t: Temper) -> Policy:
    closed, skipped = [], []
    for iid in task["incidents"]:
        inc = yield from _fetch(Call("get_incident", {"incident_id": iid}, f"Reading {iid}."), t, "status")
        if inc is None:
            if t.skip:
                skipped.append(iid)
                continue
            yield Final(f"I could not read {iid}; stopping the postmortem sweep.")
            return
        if inc["status"] != "resolved":
            continue
        u = yield from _fetch(
            Call(
                "update_incident",
                {"incident_id": iid, "status": "closed", "note": "Postmortem filed"},
                f"{iid} is resolved; closing it.",
            ),
            t,
            "status",
        )
        if u is None:
            if t.skip:
                skipped.append(iid)
                continue
            yield Final(f"Closing {iid} failed; stopping the sweep.")
            return
        closed.append(iid)
    k = yield from _fetch(
        Call(
            "create_ticket",
            {"title": f"Postmortems filed for {len(closed)} incidents", "priority": "P4", "service": "platform"},
            "Filing the summary.",
        ),
        t,
        "key",
    )
    note = f" Skipped: {', '.join(skipped)}." if skipped else ""
    yield Final(f"Closed {', '.join(closed) or 'nothing'}." + (f" Ticket {k['key']}." if k else "") + note)


POLICIES = {"rollback": rollback, "triage": triage, "capacity": capacity, "postmortem": postmortem}
TASK_RE = re.compile(r"<task>(.*?)</task>", re.S)


def history(messages: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Obs | None]]:
    """(tool_use, its result) in order, each tool_use id once (a repeated reply is read once)."""
    results: dict[str, Obs] = {}
    for m in messages:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    content = b.get("content")
                    text = (
                        content
                        if isinstance(content, str)
                        else "".join(c.get("text", "") for c in content or [] if c.get("type") == "text")
                    )
                    results.setdefault(b["tool_use_id"], Obs(text, bool(b.get("is_error"))))
    seen, out = set(), []
    for m in messages:
        if m["role"] == "assistant" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_use" and b["id"] not in seen:
                    seen.add(b["id"])
                    out.append((b, results.get(b["id"])))
    return out


def task_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    first = messages[0]["content"]
    text = first if isinstance(first, str) else "".join(b.get("text", "") for b in first)
    found = TASK_RE.search(text)
    if found is None:
        raise ValueError("no <task> block in the first user message")
    return json.loads(found.group(1))


def next_action(messages: list[dict[str, Any]], temper: Temper) -> Call | Final:
    """Replay the task's procedure over the conversation and return its next step."""
    task = task_of(messages)
    gen = POLICIES[task["kind"]](task, temper)
    action = next(gen)
    for _block, obs in history(messages):
        if obs is None:
            break
        try:
            action = gen.send(obs)
        except StopIteration:
            return Final("Done.")
    return action
