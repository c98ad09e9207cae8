"""The corpus's composition, drawn from one seed.

At the default size (320): 200 failures with a root cause (50 long traces of 15-30 LLM calls whose
root is in the first patient and whose failure shows at the end, 30 with two faults where the
first is the root, 120 others), 40 clean successes, 40 successes with absorbed errors, 40 failures
with no fault (the SIMULATED model's own slips, some after an absorbed fault). Other sizes keep
the proportions.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

from benchmarks.blind.round9.forms import TOOL_FORMS, WRITES, Form
from benchmarks.blind.round9.model import Persona
from benchmarks.blind.round9.providers import LLM_FORMS, PROVIDERS
from benchmarks.blind.round9.runner import Spec
from benchmarks.blind.round9.world import KINDS

KIND_NAMES = sorted(KINDS)
TWICE = set(WRITES) - {"cancel_appointment"}  # calls whose repeat takes effect twice
STREAM_ONLY = {"cut", "cut_mid", "stream_error", "slow"}
RETRYABLE = {408, 409, 429} | set(range(500, 600))
SLIPS = [("give_up", 6), ("wrong_slot", 5), ("dollars", 4), ("missing_param", 4), ("unknown_tool", 4),
         ("bad_json", 3), ("loop", 2), ("forget_message", 2)]
SLIP_OPS = {"wrong_slot": ("find_slots",), "dollars": ("charge_copay",),
            "missing_param": ("book_appointment", "send_patient_message"), "unknown_tool": ("book_appointment",),
            "bad_json": ("charge_copay",), "forget_message": ("send_patient_message",)}


def _cycle(rng: random.Random, forms: list[Form]) -> Iterator[Form]:
    while True:
        order = list(forms)
        rng.shuffle(order)
        yield from order


class Planner:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.count = 0
        data = [f for f in TOOL_FORMS if f.kind == "data"]
        errors = [f for f in TOOL_FORMS if f.kind != "data"]
        self.tool_errors = _cycle(self.rng, errors)
        self.text_errors = _cycle(self.rng, [f for f in errors if f.kind == "text"])
        self.data = _cycle(self.rng, data)
        self.pools: dict[str, Iterator[Form]] = {"root": _cycle(self.rng, LLM_FORMS)}

    # -- basics ---------------------------------------------------------------------------------
    def spec(self, kinds: list[str], *, stream: bool | None = None, provider: str = "", retries: int | None = None,
             parallel: bool = False) -> Spec:
        r = self.rng
        self.count += 1
        return Spec(task_id="", seed=self.seed * 100003 + self.count, kinds=kinds,
                    provider=provider or r.choice(PROVIDERS).name,
                    stream=(r.random() < 0.35) if stream is None else stream,
                    max_retries=r.choice([0, 1, 2]) if retries is None else retries,
                    timeout=r.choice([4.0, 5.0]), persona=Persona(parallel_search=parallel and len(kinds) > 1))

    def kinds(self, lo: int, hi: int) -> list[str]:
        return [self.rng.choice(KIND_NAMES) for _ in range(self.rng.randint(lo, hi))]

    def long_kinds(self) -> list[str]:
        while True:
            ks = self.kinds(4, 5)
            ops = sum(len(KINDS[k]) for k in ks)
            if 16 <= ops <= 28:
                return ks

    @staticmethod
    def flat(kinds: list[str]) -> list[tuple[int, str]]:
        return [(n, op) for n, k in enumerate(kinds) for op in KINDS[k]]

    def tool_form(self, kinds: list[str], item: int | None, *, data: bool, text_only: bool = False,
                  ops: tuple[str, ...] = ()) -> tuple[Form, int, str]:
        """A tool form that fits an op of ``item`` (any item when None), and where it goes."""
        source = self.data if data else (self.text_errors if text_only else self.tool_errors)
        for _ in range(400):
            form = next(source)
            places = [(n, op) for n, op in self.flat(kinds) if (item is None or n == item)
                      and (not form.ops or op in form.ops) and (not ops or op in ops)
                      and self._matters(form, kinds[n], op)]
            if places:
                n, op = self.rng.choice(places)
                return form, n, op
        raise RuntimeError("no tool form fits")

    @staticmethod
    def _matters(form: Form, kind: str, op: str) -> bool:
        if form.data == "wrong_copay":
            return kind == "copay"
        if form.kind == "raise" and op in ("check_eligibility", "charge_copay", "send_patient_message",
                                           "submit_prior_auth"):
            return True
        return True

    def llm_form(self, pool: str = "root") -> Form:
        """The next LLM form of a pool: every root form in turn; seconds and absorbed ones apart."""
        if pool not in self.pools:
            fits = {"second": lambda f: f.kind != "stale",
                    "retried": lambda f: f.kind in ("drop", "sleep") or (f.kind == "http" and f.status in RETRYABLE),
                    "retried_http": lambda f: f.kind == "http" and f.status in RETRYABLE}[pool]
            self.pools[pool] = _cycle(self.rng, [f for f in LLM_FORMS if fits(f)])
        return next(self.pools[pool])

    def place_llm(self, spec: Spec, form: Form, *, turns: range | None = None) -> None:
        """Put an LLM form on a turn where it changes what happens (persisting across SDK retries)."""
        ops = self.flat(spec.kinds)
        if form.provider:
            spec.provider = form.provider
        if form.kind in STREAM_ONLY:
            spec.stream = True
        if form.kind == "slow" and spec.stream is False:
            spec.stream = True
        candidates = list(turns or range(len(ops)))
        if form.kind == "stale":
            candidates = [t for t in candidates if t > 0 and ops[t - 1][1] in TWICE] or \
                [t for t in range(1, len(ops) + 1) if ops[t - 1][1] in TWICE]
        turn = self.rng.choice(candidates)
        attempts = spec.max_retries + 1 if form.kind in ("drop", "sleep") or (
            form.kind == "http" and form.status in RETRYABLE) else 1
        for a in range(1, attempts + 1):
            spec.llm_faults[(turn, a)] = form


def plan(seed: int, size: int = 320) -> list[Spec]:
    p = Planner(seed)
    r = p.rng
    scale = size / 320
    n_faulted, n_clean, n_benign = round(200 * scale), round(40 * scale), round(40 * scale)
    n_unfaulted = size - n_faulted - n_clean - n_benign
    n_long, n_two = round(50 * scale), round(30 * scale)
    n_other = n_faulted - n_long - n_two
    n_llm = round(n_other * 75 / 120)
    specs: list[Spec] = []

    # Long traces: the first patient's early step goes wrong, the failure shows at the end.
    for i in range(n_long):
        ks = p.long_kinds()
        data = i % 5 in (1, 3)
        form, n, op = p.tool_form(ks, 0, data=data, text_only=True)
        s = p.spec(ks, parallel=op != "search_patients" and r.random() < 0.3)
        s.tool_faults[(n, op, 1)] = form
        s.root, s.category, s.note = form, "faulted_failure", "long"
        specs.append(s)

    # Two faults, both changing the trajectory: the first is the root.
    for i in range(n_two):
        ks = p.kinds(2, 3)
        first, n1, op1 = p.tool_form(ks[:1], 0, data=i % 6 == 0, text_only=True)
        s = p.spec(ks)
        s.tool_faults[(n1, op1, 1)] = first
        if i % 2 == 0:
            second, n2, op2 = p.tool_form(ks, None, data=i % 4 == 0)
            if n2 == 0:
                n2 = len(ks) - 1
                op2 = next((o for o in KINDS[ks[n2]] if not second.ops or o in second.ops), KINDS[ks[n2]][0])
                if second.ops and op2 not in second.ops:
                    second, _, op2 = p.tool_form([ks[n2]], 0, data=False)
            s.tool_faults[(n2, op2, 1)] = second
        else:
            second = p.llm_form("second")
            start = KINDS[ks[0]].index(op1) + 1  # the first patient is given up at its fault
            p.place_llm(s, second, turns=range(start, start + len(p.flat(ks[1:]))))
        s.root, s.category, s.note = first, "faulted_failure", "two_faults"
        specs.append(s)

    # Other single-fault failures, LLM side and tool side.
    for i in range(n_other):
        ks = p.kinds(1, 3)
        s = p.spec(ks)
        if i < n_llm:
            form = p.llm_form()
            p.place_llm(s, form)
        elif i < n_llm + 6:
            # a non-idempotent call that timed out after taking effect, retried by the model: done twice
            form, n, op = p.tool_form(ks + ["copay", "referral"], None, data=False,
                                      ops=("charge_copay", "send_patient_message", "book_appointment"))
            while form.label != "timeout" or form.kind != "text":
                form, n, op = p.tool_form(ks + ["copay", "referral"], None, data=False,
                                          ops=("charge_copay", "send_patient_message", "book_appointment"))
            s.kinds = ks + ["copay", "referral"]
            form = dataclasses.replace(form, acted=True)
            s.tool_faults[(n, op, 1)] = form
            s.persona.retries[(n, op)] = 1
            s.note = "retried_twice"
        elif i < n_llm + 14:
            # a fault that met the retry too: the model tried again and saw it again
            form, n, op = p.tool_form(ks, None, data=False, text_only=True,
                                      ops=("search_patients", "get_patient", "find_slots", "list_appointments"))
            s.tool_faults[(n, op, 1)] = s.tool_faults[(n, op, 2)] = form
            s.persona.retries[(n, op)] = 1
            s.note = "persisted"
        else:
            form, n, op = p.tool_form(ks, None, data=(i % 5 in (0, 2)))
            s.tool_faults[(n, op, 1)] = form
        s.root, s.category = form, "faulted_failure"
        specs.append(s)

    for _ in range(n_clean):
        ks = p.kinds(1, 4)
        s = p.spec(ks, parallel=r.random() < 0.3)
        s.category = "clean_success"
        specs.append(s)

    for i in range(n_benign):
        ks = p.kinds(1, 3)
        s = p.spec(ks, retries=r.choice([1, 2]))
        s.category = "benign_success"
        if i % 8 in (0, 1, 2):
            form, n, op = p.tool_form(ks, None, data=False, text_only=True,
                                      ops=("search_patients", "get_patient", "check_eligibility", "find_slots",
                                           "list_appointments"))
            s.tool_faults[(n, op, 1)] = form
            s.persona.retries[(n, op)] = 1
        elif i % 8 == 3:
            form = dataclasses.replace(next(f for f in LLM_FORMS if f.kind == "slow"), name="slow_reply_waited_out")
            s.stream = False
            s.llm_faults[(r.randrange(len(p.flat(ks))), 1)] = form
        else:
            form = p.llm_form("retried")
            if form.provider:
                s.provider = form.provider
            s.llm_faults[(r.randrange(len(p.flat(ks)) + 1), 1)] = form
        s.root = form
        specs.append(s)

    slips = [name for name, k in SLIPS for _ in range(k)]
    for i in range(n_unfaulted):
        slip = slips[i % len(slips)]
        while True:
            ks = p.kinds(1, 3)
            places = [(n, op) for n, op in p.flat(ks) if op in SLIP_OPS.get(slip, (op,))]
            if places:
                break
        s = p.spec(ks)
        n, op = r.choice(places)
        if slip == "give_up" and (n, op) == (0, "search_patients"):
            n, op = p.flat(ks)[min(1, len(p.flat(ks)) - 1)]
        s.persona.slip, s.persona.slip_item, s.persona.slip_op = slip, n, op
        s.category, s.note = "unfaulted_failure", slip
        if i % 4 == 3:  # an absorbed fault before the slip
            form = p.llm_form("retried_http")
            s.provider, s.max_retries = form.provider or s.provider, max(1, s.max_retries)
            s.llm_faults[(0, 1)] = form
            s.root = form
        specs.append(s)

    r.shuffle(specs)
    for k, s in enumerate(specs):
        s.task_id = f"fd-{seed}-{k:04d}"
    return specs
