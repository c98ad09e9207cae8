"""The corpus's composition, drawn from the seed: which episodes, which task, which fault where.

For the default 320 episodes: 200 failures with a root cause (at least 45 long queue runs with the
root on one of the first tickets, 30 with two faults), 40 clean successes, 40 successes that met
errors on the way, 40 failures with no fault (the model's own slips, some after an absorbed fault).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .forms import FORMS, Form
from .model import Persona, ScriptedModel
from .providers import FAMILY_PROVIDER, PROVIDERS
from .runtime import FaultSpec
from .world import Task

KIND_TOOLS = {
    "refund": ("get_ticket", "get_customer", "lookup_order", "search_kb", "issue_refund", "send_email",
               "update_ticket", "schedule_csat"),
    "outage": ("get_ticket", "get_customer", "search_kb", "page_oncall", "send_sms", "update_ticket"),
    "credit": ("get_ticket", "get_customer", "get_subscription", "search_kb", "apply_credit", "send_email",
               "update_ticket", "schedule_csat"),
    "queue": ("get_ticket", "search_kb", "send_email", "update_ticket"),
}
WV_KINDS = {"wv_order_total_shift": ("refund",), "wv_customer_email_neighbour": ("refund", "credit"),
            "wv_customer_phone_stale": ("outage",), "wv_customer_tier_stale": ("outage",),
            "wv_subscription_price_stale": ("credit",), "wv_ticket_order_neighbour": ("refund",),
            "wv_ticket_months_shift": ("credit",), "wv_ticket_service_swapped": ("outage",)}
WRITES = ("issue_refund", "apply_credit", "send_email", "send_sms", "page_oncall", "schedule_csat")
RETRYABLE = {408, 409, 429, 500, 502, 503, 504, 524}
DAMAGE = ("corrupt", "args_empty", "args_schema")
SHORT = ("refund", "outage", "credit")


@dataclass
class EpisodeSpec:
    task_id: str
    category: str
    kind: str
    queue_len: int
    provider: str
    persona: Persona
    specs: list[FaultSpec] = field(default_factory=list)
    max_retries: int = 2
    timeout: float = 30.0
    deadline: float = 120.0
    slow_turn: int = -1
    slow_s: float = 0.0
    stream: list[bool] = field(default_factory=list)
    world_seed: int = 0
    note: str = ""


def kinds_for(form: Form) -> tuple[str, ...]:
    if form.id in WV_KINDS:
        return WV_KINDS[form.id]
    if form.side == "llm":
        return SHORT + (("queue",) if form.mech in DAMAGE + ("stale",) else ())
    return tuple(k for k, tools in KIND_TOOLS.items() if set(form.tools) & set(tools))


def turns_of(kind: str, queue_len: int, persona: Persona) -> list[list[str]]:
    """The tools of each turn of an unfaulted run (the last turn, the answer, is not listed)."""
    t = Task(kind=kind, ticket_ids=[f"T-{i}" for i in range(max(1, queue_len))], prompt="")
    model = ScriptedModel(t, persona, lambda a, b: "")
    return [[s.tool for s in g] for g in model.slots]


class Planner:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed

    def persona(self, **kw: object) -> Persona:
        p = Persona(parallel=self.rng.random() < 0.7)
        for k, v in kw.items():
            setattr(p, k, v)
        return p

    def base(self, i: int, category: str, kind: str, provider: str | None = None, queue_len: int = 0,
             **persona: object) -> EpisodeSpec:
        r = self.rng
        if kind == "queue" and not queue_len:
            queue_len = r.randrange(3, 6)
        return EpisodeSpec(task_id=f"r8-{i:04d}", category=category, kind=kind, queue_len=queue_len,
                           provider=provider or r.choice(sorted(PROVIDERS)), persona=self.persona(**persona),
                           max_retries=r.choice([0, 1, 2, 2]), stream=[r.random() < 0.8 for _ in range(8)],
                           world_seed=r.randrange(1 << 30))

    def tool_spec(self, ep: EpisodeSpec, form: Form, item: int = 0) -> FaultSpec:
        tools = [t for t in form.tools if t in KIND_TOOLS[ep.kind]]
        if form.mech == "wrong_value" and form.id == "wv_ticket_requester_swapped" and ep.kind == "outage":
            tools = ["get_ticket"]
        tool = self.rng.choice(tools)
        return FaultSpec(form, tool=tool, occurrence=item if ep.kind == "queue" else 0)

    def llm_spec(self, ep: EpisodeSpec, form: Form, first_turns: int | None = None) -> FaultSpec:
        turns = turns_of(ep.kind, ep.queue_len, ep.persona)
        limit = len(turns) if first_turns is None else min(first_turns, len(turns))
        if form.opts.get("first_turn"):
            turn = 0
        elif form.mech == "stale":
            writes = [i + 1 for i, g in enumerate(turns[:limit]) if set(g) & set(WRITES)]
            turn = self.rng.choice(writes)
        elif form.mech in DAMAGE:
            turn = self.rng.randrange(limit)
        elif form.mech == "latency":
            turn = self.rng.randrange(1, 4)
        else:
            turn = self.rng.randrange(len(turns))
        status = int(form.opts.get("status", 0))
        repeats = 1
        if form.mech in ("disconnect", "read_timeout") or status in RETRYABLE:
            repeats = ep.max_retries + 1
        if form.mech in ("read_timeout", "cut") and form.opts.get("variant", "stall") == "stall":
            ep.timeout = 1.0
            ep.max_retries = min(ep.max_retries, 1)
            repeats = ep.max_retries + 1 if form.mech == "read_timeout" else 1
        if form.mech == "latency":
            ep.deadline = 2.5
        if form.mech in DAMAGE:
            ep.persona.retries = 0
        return FaultSpec(form, turn=turn, repeats=repeats)


def compose(seed: int, n: int) -> list[EpisodeSpec]:
    """Every episode's spec, in task-id order; same seed, same corpus."""
    pl = Planner(seed)
    r = pl.rng
    n_faulted = round(n * 200 / 320)
    n_clean = n_benign = round(n * 40 / 320)
    n_unfaulted = n - n_faulted - n_clean - n_benign
    n_long = max(1, round(n_faulted * 48 / 200)) if n_faulted else 0
    n_two = round(n_faulted * 30 / 200)
    data = [f for f in FORMS if f.side == "tool" and f.mech != "text"]
    llm = [f for f in FORMS if f.side == "llm"]
    text = [f for f in FORMS if f.side == "tool" and f.mech == "text"]
    r.shuffle(text)
    deck = llm + data * 2 + text          # every model form and data form, then API error texts
    scale = n_faulted / 200
    roots = (llm[: round(len(llm) * scale)] + (data * 2)[: round(2 * len(data) * scale)]
             + (text * (1 + n_faulted // len(text))))[:n_faulted] if n_faulted < len(deck) else list(deck)
    r.shuffle(roots)
    longs = [f for f in roots if "queue" in kinds_for(f)][:n_long]
    rest = list(roots)
    for f in longs:
        rest.remove(f)
    two_ok = [f for f in rest if (f.side == "tool" and not set(f.tools) <= {"update_ticket"})
              or f.mech in DAMAGE + ("stale",)]
    twos = two_ok[:n_two]
    shorts = list(rest)
    for f in twos:
        shorts.remove(f)
    ids = list(range(n))
    r.shuffle(ids)
    specs: list[EpisodeSpec] = []
    it = iter(ids)
    for form in longs:
        ep = pl.base(next(it), "faulted_failure", "queue", FAMILY_PROVIDER.get(form.family), on_fail="skip")
        ep.queue_len = r.randrange(6, 10) if ep.persona.parallel else r.randrange(5, 8)
        if form.side == "tool":
            ep.specs.append(pl.tool_spec(ep, form, r.randrange(2)))
            if r.random() < 0.3 and form.mech == "text":
                ep.persona.retries = 1
                ep.specs[0].repeats = 2
        else:
            ep.specs.append(pl.llm_spec(ep, form, first_turns=6))
        ep.note = "long"
        specs.append(ep)
    second_q = [f for f in FORMS if f.side == "tool" and f.mech == "text" and "get_ticket" in f.tools]
    crash_pool = [f for f in FORMS if f.side == "llm" and f.mech == "http" and not f.opts.get("first_turn")
                  and int(f.opts["status"]) in RETRYABLE]
    for form in twos:
        kinds = kinds_for(form)
        if "queue" in kinds and r.random() < 0.5:
            ep = pl.base(next(it), "faulted_failure", "queue", FAMILY_PROVIDER.get(form.family),
                         queue_len=r.randrange(4, 7), on_fail="skip")
            first = pl.tool_spec(ep, form, 0) if form.side == "tool" else pl.llm_spec(ep, form, first_turns=3)
            second = FaultSpec(r.choice(second_q), tool="get_ticket", occurrence=ep.queue_len - 1)
        else:
            kind = r.choice([k for k in kinds if k != "queue"] or list(kinds))
            ep = pl.base(next(it), "faulted_failure", kind, FAMILY_PROVIDER.get(form.family), on_fail="skip",
                         queue_len=4 if kind == "queue" else 0)
            first = pl.tool_spec(ep, form) if form.side == "tool" else pl.llm_spec(ep, form)
            turns = turns_of(ep.kind, ep.queue_len, ep.persona)
            at = first.turn if first.turn >= 0 else next(
                i for i, g in enumerate(turns)
                if first.tool in g and (ep.kind != "queue" or i // 3 >= first.occurrence))
            crash = r.choice(crash_pool)
            if form.side == "tool":
                ep.provider = FAMILY_PROVIDER.get(crash.family, ep.provider)
            second = FaultSpec(crash, turn=at + 1, repeats=ep.max_retries + 1)
        ep.specs += [first, second]
        ep.note = "two_faults"
        specs.append(ep)
    twice_left = round(6 * scale)
    for form in shorts:
        kind = r.choice([k for k in kinds_for(form) if k != "queue"] or ["queue"])
        if form.side == "tool" and form.label in ("timeout", "connection") and twice_left > 0:
            kind = r.choice([k for k in SHORT if set(form.tools) & set(WRITES) & set(KIND_TOOLS[k])] or [kind])
        ep = pl.base(next(it), "faulted_failure", kind, FAMILY_PROVIDER.get(form.family),
                     on_fail=r.choice(["give_up", "give_up", "skip"]))
        writes = sorted(set(form.tools) & set(WRITES) & set(KIND_TOOLS[kind]))
        if form.side == "tool" and form.label in ("timeout", "connection") and writes and twice_left > 0:
            twice_left -= 1               # the write went through, the agent was told it did not, and retried
            ep.persona.retries = 1
            ep.specs.append(FaultSpec(form, tool=r.choice(writes), repeats=1, applied=True))
            ep.note = "applied_twice"
        elif form.side == "tool":
            spec = pl.tool_spec(ep, form)
            if form.mech == "text" and r.random() < 0.35:
                ep.persona.retries = 1
                spec.repeats = 2
            ep.specs.append(spec)
        else:
            ep.specs.append(pl.llm_spec(ep, form))
        specs.append(ep)
    for _ in range(n_clean):
        kind = r.choice(["refund", "outage", "credit", "queue"])
        specs.append(pl.base(next(it), "clean_success", kind))
    transient = [f for f in FORMS if f.side == "llm" and (f.mech == "disconnect" or int(f.opts.get("status", 0))
                                                          in RETRYABLE)]
    retry_tool = [f for f in FORMS if f.side == "tool" and f.mech == "text"
                  and f.label in ("rate_limit", "timeout", "error", "connection")
                  and not set(f.tools) <= set(WRITES)]
    def benign_fault(ep: EpisodeSpec, how: str) -> None:
        if how == "sdk_retry":
            ep.max_retries = max(1, ep.max_retries)
            form = r.choice(transient)
            ep.provider = FAMILY_PROVIDER.get(form.family, ep.provider)
            turns = turns_of(ep.kind, ep.queue_len, ep.persona)
            ep.specs.append(FaultSpec(form, turn=r.randrange(len(turns)), repeats=1))
        elif how == "tool_retry":
            ep.persona.retries = 1
            form = r.choice([f for f in retry_tool if set(f.tools) & set(KIND_TOOLS[ep.kind])
                             and not set(f.tools) & set(KIND_TOOLS[ep.kind]) <= set(WRITES)])
            spec = pl.tool_spec(ep, form)
            while spec.tool in WRITES:
                spec = pl.tool_spec(ep, form)
            ep.specs.append(spec)
        elif how == "empty_search":
            ep.persona.slip, ep.persona.slip_slot = "odd_query", "kb0"
        else:
            ep.slow_turn, ep.slow_s = r.randrange(1, 3), 0.6
    hows = ["sdk_retry", "tool_retry", "empty_search", "slow"]
    for j in range(n_benign):
        how = hows[j % 4] if j < 36 else r.choice(hows[:2])
        kind = r.choice(["refund", "outage", "credit"] + (["queue"] if how != "empty_search" else []))
        ep = pl.base(next(it), "benign_success", kind)
        benign_fault(ep, how)
        ep.note = how
        specs.append(ep)
    slips = ["give_up_at", "wrong_amount", "bad_json", "missing_param", "unknown_tool", "forget", "wrong_status"]
    for j in range(n_unfaulted):
        slip = slips[j % len(slips)]
        kind = {"wrong_amount": r.choice(["refund", "credit"]), "wrong_status": "outage"}.get(
            slip, r.choice(["refund", "outage", "credit", "queue"]))
        ep = pl.base(next(it), "unfaulted_failure", kind)
        turns = turns_of(kind, ep.queue_len, ep.persona)
        slots = [(s.name, s.tool) for g in ScriptedModel(
            Task(kind, [f"T-{i}" for i in range(max(1, ep.queue_len))], ""), ep.persona, lambda a, b: "").slots
            for s in g]
        ep.persona.slip = slip
        ep.persona.slip_slot, slip_tool = r.choice(slots[1:])
        ep.persona.slip_turn = r.randrange(1, len(turns))
        if j % 4 == 3:
            benign_fault(ep, r.choice(["sdk_retry", "tool_retry"]))
            if ep.specs and ep.specs[0].tool in (slip_tool, "update_ticket"):
                ep.specs.clear()          # its retry would meet the slip's error: not an absorbed fault
                benign_fault(ep, "sdk_retry")
            ep.note = "after_absorbed"
        specs.append(ep)
    specs.sort(key=lambda e: e.task_id)
    return specs
