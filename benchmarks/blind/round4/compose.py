"""The corpus plan: which episodes, which task, which failure form where, from one seed.

Faults are placed on turns (model side) and on a tool's n-th call (tool side) read from a dry run
of the clean task, so each lands on the call it is meant for. Every episode states the outcome it
must have; the build checks it (a fault that failed to change the outcome is a build error, not a
label to bend).
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field

from benchmarks.blind.round4 import tools
from benchmarks.blind.round4.forms_llm import FORMS as LLM_FORM_LIST
from benchmarks.blind.round4.forms_llm import LLM_FORMS, LlmForm
from benchmarks.blind.round4.forms_tool import AFTER_EFFECT, TOOL_ERROR_FORMS, forms_for
from benchmarks.blind.round4.model import POLICIES, Call, Final, Obs, Temper
from benchmarks.blind.round4.registry import Fault
from benchmarks.blind.round4.tool_data import DATA_FORMS
from benchmarks.blind.round4.world import World, build_world

TOOL_TASKS = {
    "get_incident": ("rollback", "triage", "postmortem"),
    "update_incident": ("rollback", "postmortem"),
    "query_metrics": ("rollback", "capacity"),
    "search_logs": ("triage",),
    "list_deployments": ("rollback",),
    "rollback": ("rollback",),
    "scale_service": ("capacity",),
    "page_oncall": ("triage",),
    "create_ticket": ("triage", "capacity", "postmortem"),
}
DATA_TASKS = {
    "metrics_values_shifted": ("capacity", "rollback"),
    "metrics_stale_window": ("capacity", "rollback"),
    "metrics_replicas_stale_cache": ("capacity",),
    "deploy_status_swapped": ("rollback",),
    "deploy_version_neighbour": ("rollback",),
    "incident_wrong_service": ("rollback",),
    "incident_team_swapped": ("triage",),
    "incident_severity_shifted": ("triage",),
    "incident_status_stale": ("postmortem",),
}
SILENT = ("wrong_value", "truncated")  # used as given: the task fails at the end
ARG_KINDS = ("max_tokens_tool", "corrupt_args", "corrupt_delta", "schema_args", "empty_args")
SHORT = ("rollback", "triage")
LONG = ("capacity", "postmortem")


@dataclass
class Spec:
    task_id: str
    kind: str
    size: int
    world_seed: int
    category: str
    temper: Temper
    llm_faults: dict[int, Fault] = field(default_factory=dict)
    tool_faults: dict[tuple[str, int], Fault] = field(default_factory=dict)
    stream_turns: set[int] = field(default_factory=set)
    note: str = ""  # what the episode is about (slip, absorbed form)
    seed: int = 0

    def world(self) -> World:
        return build_world(self.kind, random.Random(self.world_seed), self.size)

    @property
    def expect_success(self) -> bool:
        return self.category in ("clean_success", "benign_success")


def dry_run(world: World, temper: Temper) -> list[Call | Final]:
    """The clean episode's actions, one per model turn."""
    world = copy.deepcopy(world)
    gen = POLICIES[world.task["kind"]](world.task, temper)
    actions: list[Call | Final] = []
    action = next(gen)
    while True:
        actions.append(action)
        if isinstance(action, Final):
            return actions
        try:
            data = tools.run(world, action.name, action.input)
            obs = Obs(__import__("json").dumps(data), False)
        except tools.ToolRefused as exc:
            obs = Obs(str(exc), True)
        try:
            action = gen.send(obs)
        except StopIteration:
            return actions


def occurrences(actions: list[Call | Final]) -> list[tuple[int, str, int]]:
    """(turn, tool, occurrence of that tool) for each call of the clean run."""
    seen: dict[str, int] = {}
    out = []
    for turn, a in enumerate(actions):
        if isinstance(a, Call):
            out.append((turn, a.name, seen.get(a.name, 0)))
            seen[a.name] = seen.get(a.name, 0) + 1
    return out


class Planner:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.n = 0
        self.specs: list[Spec] = []

    # -- helpers ---------------------------------------------------------------------------
    def _spec(self, category: str, kind: str, temper: Temper, long: bool = False) -> tuple[Spec, list[Call | Final]]:
        self.n += 1
        size = (
            self.rng.randint(8, 13)
            if long and kind == "capacity"
            else self.rng.randint(11, 14)
            if long
            else self.rng.randint(3, 5)
        )
        spec = Spec(
            f"r4-{self.seed}-{self.n:04d}",
            kind,
            size,
            self.rng.randrange(2**31),
            category,
            temper,
            seed=self.rng.randrange(2**31),
        )
        mode = self.rng.choice(("plain", "plain", "stream", "alternate", "random"))
        actions = dry_run(spec.world(), temper)
        turns = range(len(actions) + 4)
        if mode == "stream":
            spec.stream_turns = set(turns)
        elif mode == "alternate":
            spec.stream_turns = {t for t in turns if t % 2 == 1}
        elif mode == "random":
            spec.stream_turns = {t for t in turns if self.rng.random() < 0.4}
        self.specs.append(spec)
        return spec, actions

    def _set_stream(self, spec: Spec, turn: int, form: LlmForm) -> None:
        want = form.params.get("stream")
        if form.needs_stream or want is True:
            spec.stream_turns.add(turn)
        elif form.needs_plain or want is False:
            spec.stream_turns.discard(turn)

    # -- model-side root causes ----------------------------------------------------------------
    def llm_root(self, form: LlmForm, long: bool) -> Spec:
        kind = self.rng.choice(LONG if long else SHORT)
        if form.kind == "stale" and kind == "rollback":
            kind = "triage"
        skip = long
        temper = Temper(retry=False, skip=skip)
        spec, actions = self._spec("faulted_failure", kind, temper, long=long)
        calls = [t for t, a in enumerate(actions) if isinstance(a, Call)]
        if form.kind in ARG_KINDS:
            cands = [
                t
                for t in calls
                if actions[t].name not in ("create_ticket", "page_oncall")
                and (form.kind != "corrupt_args" or actions[t].name != "update_incident" or True)
            ]
            cands = cands[:3] if long else cands
            turn = self.rng.choice(cands)
        elif form.kind == "stale":
            cands = [t + 1 for t in calls if actions[t].name in tools.NON_IDEMPOTENT and t + 1 < len(actions)]
            turn = self.rng.choice(cands)
        else:
            turn = self.rng.choice(calls[:3] if long else calls)
        spec.llm_faults[turn] = Fault(form.name, "root", form.persist)
        self._set_stream(spec, turn, form)
        return spec

    # -- tool-side root causes -----------------------------------------------------------------
    def tool_root(self, form_name: str, long: bool, second: str | None = None) -> Spec:
        err = TOOL_ERROR_FORMS.get(form_name)
        data = DATA_FORMS.get(form_name)
        rng = self.rng
        if err is not None and err.after:
            names = {"pagerduty": ["page_oncall"], "jira": ["create_ticket"], "servicenow": ["create_ticket"]}.get(
                err.family, ["page_oncall", "create_ticket"]
            )
            pool = [(t, k) for t in names for k in TOOL_TASKS[t]]
        elif err is not None:
            pool = [(t, k) for t in TOOL_TASKS if err in forms_for(t) for k in TOOL_TASKS[t]]
        else:
            pool = [(t, k) for t in data.tools for k in TOOL_TASKS[t] if k in DATA_TASKS.get(form_name, TOOL_TASKS[t])]
        preferred = [(t, k) for t, k in pool if (k in LONG) == long and not (long and t == "create_ticket")]
        pool = preferred or pool
        tool, kind = rng.choice(sorted(pool))
        silent = data is not None and data.label in SILENT and form_name not in ("incident_incomplete",)
        if err is not None and err.after:
            temper, times = Temper(retry=True, skip=kind in LONG), 1
        elif silent:
            temper, times = Temper(retry=rng.random() < 0.5, skip=kind in LONG), 1
        elif rng.random() < 0.5:
            temper, times = Temper(retry=True, skip=kind in LONG), 2
        else:
            temper, times = Temper(retry=False, skip=kind in LONG), 1
        spec, actions = self._spec("faulted_failure", kind, temper, long=kind in LONG)
        occ = [(t, o) for t, name, o in occurrences(actions) if name == tool]
        if (
            kind == "rollback"
            and tool == "query_metrics"
            and data is not None
            and data.tools == ("query_metrics",)
            and form_name == "metrics_replicas_stale_cache"
        ):
            raise AssertionError("replicas only on cpu")
        if kind in LONG:
            if (
                kind == "postmortem"
                and tool == "update_incident"
                or (kind == "postmortem" and form_name == "incident_status_stale")
            ):
                occ = occ[:2]
            else:
                occ = occ[:3]
        if kind == "postmortem" and tool == "get_incident" and not silent:
            occ = [(t, o) for t, o in occ if _resolved_next(actions, t)] or occ
        turn, o = rng.choice(occ)
        if kind == "postmortem" and form_name == "incident_status_stale":
            o = 0  # the first incident is always resolved
        spec.tool_faults[(tool, o)] = Fault(form_name, "root", times)
        if second is not None:
            self._second(spec, actions, tool, o, second)
        return spec

    def _second(self, spec: Spec, actions: list[Call | Final], tool: str, occ: int, form_name: str) -> None:
        """A later fault that also changes the trajectory (a skipped item, a wrong value)."""
        root_turn = next(t for t, name, o in occurrences(actions) if name == tool and o == occ)
        later = [
            (t, name, o)
            for t, name, o in occurrences(actions)
            if t > root_turn + 3
            and name in ("query_metrics", "get_incident")
            and (spec.kind != "postmortem" or _resolved_next(actions, t))
        ]
        t, name, o = self.rng.choice(later[len(later) // 2 :])
        err = TOOL_ERROR_FORMS.get(form_name)
        if err is None or err not in forms_for(name):
            cands = sorted(f.name for f in forms_for(name))
            form_name = self.rng.choice(cands)
        spec.tool_faults[(name, o)] = Fault(form_name, "second", 1)
        spec.tool_faults[(tool, occ)].times = 1
        spec.temper.retry = False
        spec.temper.skip = True


def _resolved_next(actions: list[Call | Final], turn: int) -> bool:
    """Whether the clean run closes the incident it just read (so skipping it changes the outcome)."""
    nxt = actions[turn + 1] if turn + 1 < len(actions) else None
    return isinstance(nxt, Call) and nxt.name == "update_incident"


def _long_capable(name: str) -> bool:
    if name in AFTER_EFFECT:
        return False
    if name in DATA_FORMS:
        tools_ = DATA_FORMS[name].tools
        return any(k in LONG and k in DATA_TASKS.get(name, TOOL_TASKS[t]) for t in tools_ for k in TOOL_TASKS[t])
    err = TOOL_ERROR_FORMS[name]
    return any(err in forms_for(t) for t in ("query_metrics", "get_incident", "scale_service", "update_incident"))


def _cycle(rng: random.Random, items: list[str], n: int) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        batch = list(items)
        rng.shuffle(batch)
        out += batch
    return out[:n]


def plan(seed: int, size: int = 320) -> list[Spec]:
    """The whole corpus: at 320, 200 faulted failures (45+ long, 30 with two faults), 40 clean
    successes, 40 successes with benign errors, 40 failures with no fault."""
    p = Planner(seed)
    rng = p.rng
    scale = size / 320
    n_faulted = round(200 * scale)
    n_two = round(30 * scale)
    n_long_single = round(40 * scale)
    n_llm = round(78 * scale)
    n_tool = n_faulted - n_llm
    n_clean = n_benign = round(40 * scale)
    n_unfaulted = size - n_faulted - n_clean - n_benign

    root_llm = [f.name for f in LLM_FORM_LIST if f.label != "none"]
    slow_ones = {"read_timeout_silence"}
    llm_names = _cycle(rng, root_llm, n_llm)
    # at most two silent-timeout episodes (each waits out 3 client timeouts)
    llm_names = [
        n if n not in slow_ones or llm_names[:i].count(n) < 2 else "a_529_overloaded_error"
        for i, n in enumerate(llm_names)
    ]
    arg_forms = [n for n in llm_names if LLM_FORMS[n].kind in ARG_KINDS]
    long_llm = set(arg_forms[: max(1, round(10 * scale))])
    for i, name in enumerate(llm_names):
        p.llm_root(LLM_FORMS[name], long=name in long_llm and i == llm_names.index(name))

    errors = sorted(n for n, f in TOOL_ERROR_FORMS.items() if not f.after)
    data_by_label: dict[str, list[str]] = {}
    for n, f in sorted(DATA_FORMS.items()):
        data_by_label.setdefault(f.label, []).append(n)
    # the taxonomy's seven tool-result kinds are about equally frequent: data forms get their share
    n_data = round(n_tool * 0.5)
    quota = {"wrong_value": 0.3, "truncated": 0.26, "key_rename": 0.18, "empty": 0.13, "malformed_json": 0.13}
    data_names: list[str] = []
    for label, share in quota.items():
        data_names += _cycle(rng, data_by_label[label], round(n_data * share))
    after = sorted(AFTER_EFFECT)
    err_names = _cycle(rng, after, min(len(after), 4)) + _cycle(
        rng, errors, n_tool - len(data_names) - min(len(after), 4)
    )
    tool_names = data_names + err_names
    rng.shuffle(tool_names)
    long_ok = [i for i, n in enumerate(tool_names) if _long_capable(n)]
    chosen_long = set(long_ok[: n_long_single + n_two])
    two = set(sorted(chosen_long)[:n_two])
    seconds = _cycle(rng, errors, n_two)
    for i, name in enumerate(tool_names):
        p.tool_root(name, long=i in chosen_long, second=seconds.pop() if i in two else None)

    for _ in range(n_clean):
        p._spec("clean_success", rng.choice(SHORT + LONG), Temper(), long=rng.random() < 0.25)
    _benign(p, n_benign)
    _unfaulted(p, n_unfaulted)
    order = list(p.specs)
    return order


def _benign(p: Planner, n: int) -> None:
    rng = p.rng
    retried = [f.name for f in LLM_FORM_LIST if f.kind == "http" and f.persist == 3]
    conn = [f.name for f in LLM_FORM_LIST if f.kind == "conn"]
    stream = [f.name for f in LLM_FORM_LIST if f.kind in ("stream_cut", "sse_error")]
    plan_kinds = _cycle(
        rng,
        ["sdk_retry"] * 4
        + ["conn"]
        + ["stream_retry"] * 2
        + ["tool_retry"] * 3
        + ["data_retry"]
        + ["pause_turn", "narrow_search"],
        n,
    )
    for what in plan_kinds:
        kind = rng.choice(SHORT + LONG)
        if what == "narrow_search":
            kind = "triage"
        temper = Temper(retry=True, skip=kind in LONG, narrow_first=what == "narrow_search")
        spec, actions = p._spec("benign_success", kind, temper, long=rng.random() < 0.2)
        calls = [t for t, a in enumerate(actions) if isinstance(a, Call)]
        if what in ("sdk_retry", "conn", "stream_retry", "pause_turn"):
            name = {
                "sdk_retry": lambda: rng.choice(retried),
                "conn": lambda: rng.choice(conn),
                "stream_retry": lambda: rng.choice(stream),
                "pause_turn": lambda: "pause_turn_continued",
            }[what]()
            turn = rng.choice(calls)
            spec.llm_faults[turn] = Fault(name, "absorbed", 1)
            p._set_stream(spec, turn, LLM_FORMS[name])
            spec.note = name
        elif what in ("tool_retry", "data_retry"):
            reads = ("get_incident", "query_metrics", "search_logs", "list_deployments")
            t, tool, o = rng.choice(
                [
                    x
                    for x in occurrences(actions)
                    if x[1] not in tools.NON_IDEMPOTENT and (what == "tool_retry" or x[1] in reads)
                ]
            )
            if what == "tool_retry":
                name = rng.choice(sorted(f.name for f in forms_for(tool)))
            else:
                name = rng.choice(
                    sorted(
                        n
                        for n, f in DATA_FORMS.items()
                        if f.label in ("key_rename", "empty", "malformed_json") and tool in f.tools
                    )
                    or ["empty_object"]
                )
            spec.tool_faults[(tool, o)] = Fault(name, "absorbed", 1)
            spec.note = name
        else:
            spec.note = "empty search broadened"


SLIPS = ["give_up", "prose", "bad_args", "unknown_tool", "bad_json", "wrong_arg", "wrong_final"]


def _unfaulted(p: Planner, n: int) -> None:
    rng = p.rng
    slips = _cycle(rng, SLIPS + ["wrong_arg", "bad_args", "give_up"], n)
    retried = [f.name for f in LLM_FORM_LIST if f.kind == "http" and f.persist == 3]
    for i, slip in enumerate(slips):
        kind = "triage" if slip == "wrong_final" else rng.choice(SHORT + LONG)
        temper = Temper(retry=False, skip=False)
        spec, actions = p._spec("unfaulted_failure", kind, temper, long=rng.random() < 0.2)
        calls = [t for t, a in enumerate(actions) if isinstance(a, Call)]
        if slip == "wrong_final":
            turn = len(actions) - 1
        elif slip == "wrong_arg":
            names = (
                ("scale_service", "page_oncall", "update_incident", "rollback")
                if kind != "triage"
                else ("page_oncall",)
            )
            turn = rng.choice([t for t in calls if actions[t].name in names] or calls)
        elif slip == "bad_args":  # keeps some declared parameters (never all gone: that is `{}`)
            turn = rng.choice([t for t in calls if len(tools.PARAMS[actions[t].name]) >= 2])
        else:
            turn = rng.choice(calls)
        temper.slips[turn] = slip
        if slip == "bad_json":
            spec.stream_turns.add(turn)
        spec.note = f"slip:{slip}"
        if i % 3 == 0 and turn > 0:  # an absorbed fault earlier in the same episode
            before = rng.choice([t for t in range(turn)])
            name = rng.choice(retried)
            spec.llm_faults[before] = Fault(name, "absorbed", 1)
            spec.note += f"+absorbed:{name}"
