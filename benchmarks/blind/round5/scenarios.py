"""The corpus's composition: which episode gets which task, profile, clerk temperament and forms.

Everything is drawn from one ``random.Random(seed)``. A fault's place is chosen on the trajectory
the clerk would follow with no fault (simulated over an in-memory copy of the task's ledger), so a
form meant for a payment posting lands on the request that posts it. Labels are not decided here:
the builder writes them from what each run actually did.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from benchmarks.blind.round5 import forms_llm, forms_tool, tools
from benchmarks.blind.round5.llm_server import PROFILES
from benchmarks.blind.round5.model import Temperament, clerk
from benchmarks.blind.round5.world import SCHEMA, Task, make_task

PER_INVOICE = ("get_invoice", "get_fx_rate", "post_payment", "send_remittance")
RETRIED_HTTP = (
    "groq_429_tpm",
    "mistral_429",
    "deepseek_503_overloaded",
    "together_500",
    "openrouter_502_provider",
    "azure_429_tier",
    "ollama_500_runner",
    "litellm_429_budget",
    "litellm_500_mapped",
    "cloudflare_524",
    "cloudflare_502_page",
    "portkey_408",
    "gateway_504_page",
    "disconnect_before_headers",
    "tcp_reset",
    "body_cut_short",
)
REASK = ("empty_stop", "tool_calls_empty_array", "stream_cut_no_done", "stream_done_without_finish", "stream_only_done")
NEVER_STREAM = ("stale", "body200", "partial", "choice_error")
SLIPS = (
    "giveup_early",
    "contact_instead",
    "net_amount",
    "match_by_amount",
    "inverse_fx",
    "missing_param",
    "bad_json",
    "unknown_tool",
    "stop_short",
    "skip_remittance",
    "double_post",
    "no_status",
)
NONTERMINAL_DATA = (
    "erp_amount_shifted",
    "erp_amount_minor_units",
    "erp_currency_defaulted",
    "fx_previous_day",
    "fx_rate_shifted",
    "bank_refs_swapped",
    "vendor_wrong_entity_email",
    "vendor_name_other_entity",
    "invoice_keys_halved",
    "invoice_amount_due_key",
    "bank_iso_rmtinf",
)
NONTERMINAL_LLM = (
    "args_symbols",
    "args_mojibake",
    "stale",
    "args_replacement",
    "args_schema",
    "args_empty",
    "stream_mojibake",
)


@dataclass
class Planned:
    """One episode before it runs."""

    task_id: str
    category: str
    task: Task
    profile: str
    stream_mode: str
    temperament: Temperament
    llm_faults: dict[int, dict[str, Any]] = field(default_factory=dict)
    tool_faults: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    root: tuple[str, Any] | None = None  # ("llm", attempt) | ("tool", (name, ordinal))
    root_form: dict[str, Any] | None = None
    second: tuple[str, Any] | None = None
    absorbed: list[tuple[str, Any]] = field(default_factory=list)
    slip: str | None = None
    long: bool = False


def trajectory(task: Task, t: Temperament) -> list[tuple[str, str]]:
    """The clerk's actions on this task with no fault: [("call", tool) | ("final", "")]."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript(SCHEMA)
    for table, rows in task.rows.items():
        for r in rows:
            db.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(r))})", r)
    gen = clerk(task.prompt(), t)
    out: list[tuple[str, str]] = []
    action = next(gen)
    while True:
        kind, payload = action
        if kind == "final":
            out.append(("final", ""))
            return out
        name = payload[0]
        out.append(("call", name))
        if kind == "raw":
            return out
        try:
            import json

            res = json.dumps(tools.run(db, name, payload[1])) if name in tools.PARAMS else "Error: unknown tool"
        except tools.ToolError as exc:
            res = f"Error: {exc}"
        try:
            action = gen.send(res)
        except StopIteration:
            return out


def _turns(traj: list[tuple[str, str]], name: str) -> list[int]:
    return [i for i, (k, n) in enumerate(traj) if k == "call" and n == name]


def _profile_for(form: dict[str, Any] | None, rng: random.Random, min_retries: int = 0, max_retries: int = 9) -> str:
    if form is not None:
        for p in PROFILES:
            if form["id"].startswith(p + "_"):
                return p
    pool = [p for p, v in PROFILES.items() if min_retries <= v["retries"] <= max_retries]
    return pool[rng.randrange(len(pool))]


def _needs(form: dict[str, Any]) -> dict[str, Any]:
    """What task a form needs to matter (foreign currency, two invoices, a non-ASCII payee)."""
    fid, tools_ = form["id"], form.get("tools", [])
    need: dict[str, Any] = {}
    if (
        form["side"] == "tool"
        and tools_ == ["get_fx_rate"]
        or fid
        in (
            "erp_currency_defaulted",
            "fx_previous_day",
            "fx_rate_shifted",
            "bank_booking_day_shift",
            "fx_rate_pascal_string",
            "fx_json_cut",
            "fx_null",
        )
    ):
        need["foreign"] = True
    if fid in (
        "bank_refs_swapped",
        "search_page_cut",
        "search_odata_count_above",
        "search_netsuite_has_more",
        "bank_snowflake_partitions",
        "bank_partial_flag",
        "bank_spark_show_top",
    ):
        need["n2"] = True
    if form["kind"] in ("args_mojibake", "stream_mojibake"):
        need["nonascii"] = True
    return need


class Composer:
    def __init__(self, seed: int, size: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.size = size
        self.count = 0
        r = self.rng
        tool_forms = [f for f in forms_tool.FORMS if f["id"] != "numbers_as_strings"]
        self.data = [f for f in tool_forms if f["kind"] == "data"]
        self.errtext = [f for f in tool_forms if f["kind"] == "text"]
        self.llm = list(forms_llm.FORMS)
        for pool in (self.data, self.errtext, self.llm):
            r.shuffle(pool)
        self.cursor: dict[tuple[str, str], int] = {}

    def _next(self, pool: str, ok: Any = lambda f: True, key: str = "any") -> dict[str, Any]:
        """The next form of ``pool`` that fits, each filter walking the pool on its own."""
        forms = getattr(self, pool)
        for _ in range(len(forms) * 2):
            start = {"any": 0, "nonterminal": 1, "second": 2, "benign": 3, "absorbed": 4}[key] * len(forms) // 5
            c = self.cursor.get((pool, key), start)
            self.cursor[(pool, key)] = c + 1
            f = forms[c % len(forms)]
            if ok(f):
                return f
        raise RuntimeError(f"no form in {pool} fits")

    def _task(self, n: int, need: dict[str, Any] | None = None, **kw: Any) -> Task:
        need = need or {}
        self.count += 1
        tid = f"r5-{self.seed:02d}-{self.count:04d}"
        n = max(n, 2) if need.get("n2") else n
        return make_task(
            tid,
            random.Random(f"{self.seed}:{tid}"),
            n,
            foreign=need.get("foreign", kw.get("foreign")),
            nonascii=need.get("nonascii"),
            email=kw.get("email"),
        )

    def _mode(self, form: dict[str, Any] | None) -> str:
        if form is not None and form["kind"].startswith("stream_"):
            return "always"
        if form is not None and form["kind"] in NEVER_STREAM:
            return "never"
        return self.rng.choice(["never", "never", "always", "alternate"])

    def _n(self, long: bool, foreign: bool) -> int:
        if long:
            return self.rng.randint(4, 6) if foreign else self.rng.randint(5, 8)
        return self.rng.randint(1, 2)

    # --- placing one form -----------------------------------------------------------------------
    def _place_llm(
        self,
        form: dict[str, Any],
        traj: list[tuple[str, str]],
        early: bool,
        persist: int,
    ) -> tuple[dict[int, dict[str, Any]], int] | None:
        k = form["kind"]
        calls = [i for i, (a, n) in enumerate(traj) if a == "call" and n != "record_exception"]
        if k in ("args_symbols",):
            cand = _turns(traj, "post_payment")
        elif k in ("args_mojibake", "stream_mojibake"):
            cand = _turns(traj, "send_remittance")
        elif k == "stale":
            cand = [i + 1 for i in _turns(traj, "post_payment") if i + 1 < len(traj)]
        elif k == "args_replacement":
            cand = _turns(traj, "get_invoice") or _turns(traj, "search_invoices")
        elif k in ("args_schema", "args_empty") and early:
            cand = _turns(traj, "get_invoice")
        elif k in ("args_schema", "args_empty", "empty_tool_calls"):
            cand = calls
        else:
            cand = list(range(len(traj)))
        if not cand:
            return None
        at = cand[0] if early else cand[self.rng.randrange(len(cand))]
        if early and k not in ("args_symbols", "args_mojibake", "stale", "stream_mojibake") and len(cand) > 3:
            at = cand[self.rng.randrange(min(4, len(cand)))]
        return {at + j: form for j in range(persist)}, at

    def _persist(self, form: dict[str, Any], profile: str) -> int:
        if form["kind"] in ("http", "drop", "reset", "partial", "sleep"):
            return PROFILES[profile]["retries"] + 1
        if form["kind"] in ("empty", "empty_tool_calls", "stream_cut", "stream_done_early", "stream_no_chunks"):
            return 2
        return 1

    def _tool_slot(self, form: dict[str, Any], traj: list[tuple[str, str]], early: bool) -> tuple[str, int] | None:
        fits = [t for t in form["tools"] if _turns(traj, t)]
        if not fits:
            return None
        if early:
            fits.sort(key=lambda t: _turns(traj, t)[0])
            name = fits[0] if self.rng.random() < 0.6 else fits[self.rng.randrange(len(fits))]
            return name, 0
        name = fits[self.rng.randrange(len(fits))]
        return name, self.rng.randrange(len(_turns(traj, name)))

    # --- episodes ------------------------------------------------------------------------------
    def faulted(self, pool: str, long: bool, nonterminal: bool, second: bool) -> Planned:
        r = self.rng
        while True:
            if pool == "data":
                form = self._next(
                    "data",
                    lambda f: not nonterminal or f["id"] in NONTERMINAL_DATA,
                    "nonterminal" if nonterminal else "any",
                )
            elif pool == "errtext":
                form = self._next(
                    "errtext",
                    lambda f: not nonterminal or any(t in PER_INVOICE for t in f["tools"]),
                    "nonterminal" if nonterminal else "any",
                )
            else:
                form = self._next(
                    "llm",
                    lambda f: not nonterminal or f["kind"] in NONTERMINAL_LLM,
                    "nonterminal" if nonterminal else "any",
                )
            need = _needs(form)
            foreign = need.get("foreign", r.random() < 0.5)
            task = self._task(self._n(long or second, foreign), need, foreign=foreign)
            on_error = "skip" if (nonterminal or long) else r.choice(["giveup", "giveup", "skip"])
            temp = Temperament(on_error=on_error)
            traj = trajectory(task, temp)
            profile = _profile_for(
                form if form["side"] == "llm" else None, r, max_retries=1 if form["kind"] == "sleep" else 9
            )
            p = Planned(task.task_id, "faulted_failure", task, profile, self._mode(form), temp, long=long)
            if form["side"] == "llm":
                placed = self._place_llm(form, traj, early=long or second, persist=self._persist(form, profile))
                if placed is None:
                    self.count -= 1
                    continue
                p.llm_faults, at = placed
                p.root = ("llm", at)
            else:
                if nonterminal and pool == "errtext":
                    fits = [t for t in form["tools"] if t in PER_INVOICE and _turns(traj, t)]
                    if not fits:
                        self.count -= 1
                        continue
                    slot = (fits[r.randrange(len(fits))], 0)
                else:
                    slot = self._tool_slot(form, traj, early=long or second)
                if slot is None:
                    self.count -= 1
                    continue
                p.tool_faults[slot] = form
                p.root = ("tool", slot)
            p.root_form = form
            if second:
                self._add_second(p, traj)
            return p

    def _add_second(self, p: Planned, traj: list[tuple[str, str]]) -> None:
        """A later fault that also breaks the run (the first one stays the root cause)."""
        r = self.rng
        first_turn = (
            p.root[1]
            if p.root and p.root[0] == "llm"
            else next((i for i, (a, n) in enumerate(traj) if a == "call" and n == p.root[1][0]), 0)
            if p.root
            else 0
        )
        root_tool = p.root[1][0] if p.root[0] == "tool" else None
        if (
            root_tool in ("get_vendor", "list_bank_transactions", "get_fx_rate", "get_invoice", "search_invoices")
            and r.random() < 0.4
        ):
            form = self._next(
                "errtext", lambda f: "send_remittance" in f["tools"] or "post_payment" in f["tools"], "second"
            )
            name = "send_remittance" if "send_remittance" in form["tools"] else "post_payment"
            p.tool_faults[(name, 0)] = form
            p.second = ("tool", (name, 0))
            return
        form = self._next(
            "llm", lambda f: f["kind"] in ("http", "content", "filter", "body200", "choice_error"), "second"
        )
        if form["kind"] in NEVER_STREAM:
            p.stream_mode = "never"
        at = first_turn + r.randint(2, 4)
        for j in range(self._persist(form, p.profile)):
            p.llm_faults.setdefault(at + j, form)
        p.second = ("llm", at)

    def clean(self) -> Planned:
        r = self.rng
        foreign = r.random() < 0.5
        task = self._task(self._n(r.random() < 0.25, foreign), foreign=foreign)
        temp = Temperament(on_error=r.choice(["giveup", "skip", "retry"]))
        return Planned(task.task_id, "clean_success", task, _profile_for(None, r), self._mode(None), temp)

    def benign(self, kind: str) -> Planned:
        r = self.rng
        foreign = r.random() < 0.5
        if kind == "empty_search":
            task = self._task(0, foreign=foreign)
            p = Planned(task.task_id, "benign_success", task, _profile_for(None, r), self._mode(None), Temperament())
            p.slip = "empty_search_handled"
            return p
        if kind == "optional_missing":
            task = self._task(self._n(False, foreign), foreign=foreign, email=False)
            p = Planned(task.task_id, "benign_success", task, _profile_for(None, r), self._mode(None), Temperament())
            p.slip = "optional_field_missing"
            return p
        if kind == "sdk_retry":
            form = forms_llm.BY_ID[RETRIED_HTTP[r.randrange(len(RETRIED_HTTP))]]
            task = self._task(self._n(False, foreign), foreign=foreign)
            prof = _profile_for(form, r, min_retries=1)
            if PROFILES[prof]["retries"] < 1:
                prof = _profile_for(None, r, min_retries=1)
            p = Planned(task.task_id, "benign_success", task, prof, self._mode(form), Temperament())
            at = r.randrange(len(trajectory(task, p.temperament)))
            p.llm_faults = {at: form}
            p.absorbed = [("llm", at)]
            p.root_form = form
            return p
        if kind in ("reask", "wait"):
            if kind == "reask":
                form = forms_llm.BY_ID[REASK[r.randrange(len(REASK))]]
            else:
                form = dict(forms_llm.BY_ID[r.choice(["slow_reply", "stream_stall"])])
                form["params"] = {**form["params"], "benign": True}
            task = self._task(self._n(False, foreign), foreign=foreign)
            p = Planned(task.task_id, "benign_success", task, _profile_for(None, r), self._mode(form), Temperament())
            traj = trajectory(task, p.temperament)
            cand = (
                [i for i, (a, n) in enumerate(traj) if a == "call"]
                if form["kind"] == "empty_tool_calls"
                else list(range(len(traj)))
            )
            at = cand[r.randrange(len(cand))]
            p.llm_faults = {at: form}
            p.absorbed = [("llm", at)]
            p.root_form = form
            return p
        if kind == "numbers_as_strings":
            form = forms_tool.BY_ID["numbers_as_strings"]
            task = self._task(self._n(False, True), foreign=True)
            p = Planned(task.task_id, "benign_success", task, _profile_for(None, r), self._mode(None), Temperament())
            slot = (r.choice(["get_invoice", "get_fx_rate"]), 0)
            p.tool_faults = {slot: form}
            p.absorbed = [("tool", slot)]
            p.root_form = form
            return p
        # a tool error the clerk retries once, and the repeat answers
        form = self._next("errtext", key="benign")
        task = self._task(self._n(False, True), foreign=True)
        p = Planned(
            task.task_id, "benign_success", task, _profile_for(None, r), self._mode(None), Temperament(on_error="retry")
        )
        traj = trajectory(task, p.temperament)
        names = [
            t
            for t in form["tools"]
            if _turns(traj, t) and (t not in ("post_payment", "send_remittance") or not form["ran"])
        ]
        if not names:
            self.count -= 1
            return self.benign(kind)
        name = names[r.randrange(len(names))]
        slot = (name, r.randrange(len(_turns(traj, name))))
        p.tool_faults = {slot: form}
        p.absorbed = [("tool", slot)]
        p.root_form = form
        return p

    def unfaulted(self, with_absorbed: bool) -> Planned:
        r = self.rng
        slip = SLIPS[self.count % len(SLIPS)] if not with_absorbed else SLIPS[1 + r.randrange(len(SLIPS) - 1)]
        foreign = True if slip == "inverse_fx" else r.random() < 0.5
        n = self._n(False, foreign)
        if slip in ("stop_short",):
            n = max(2, n)
        task = self._task(n, foreign=foreign, email=True if slip == "contact_instead" else None)
        temp = Temperament(
            on_error="retry" if with_absorbed else r.choice(["giveup", "skip"]),
            slip=slip,
            slip_at=r.randrange(n) if n else 0,
        )
        p = Planned(
            task.task_id,
            "unfaulted_failure",
            task,
            _profile_for(None, r, min_retries=1),
            self._mode(None),
            temp,
            slip=slip,
        )
        if with_absorbed:
            traj = trajectory(task, temp)
            if r.random() < 0.5:
                form = forms_llm.BY_ID[RETRIED_HTTP[r.randrange(len(RETRIED_HTTP))]]
                p.stream_mode = self._mode(form)
                at = r.randrange(max(1, min(3, len(traj) - 1)))
                p.llm_faults = {at: form}
                p.absorbed = [("llm", at)]
            else:
                form = self._next(
                    "errtext",
                    lambda f: any(t in ("search_invoices", "get_vendor", "list_bank_transactions") for t in f["tools"]),
                    "absorbed",
                )
                name = next(
                    t for t in ("search_invoices", "get_vendor", "list_bank_transactions") if t in form["tools"]
                )
                p.tool_faults = {(name, 0): form}
                p.absorbed = [("tool", (name, 0))]
            p.root_form = form
        return p


def compose(seed: int, size: int) -> list[Planned]:
    """The episodes of the corpus, in task-id order."""
    c = Composer(seed, size)
    s = size / 320
    n_two, n_long = round(32 * s), round(58 * s)
    n_single = round(200 * s) - n_two - n_long
    n_clean, n_benign, n_unf = round(40 * s), round(40 * s), size - round(200 * s) - round(80 * s)
    out: list[Planned] = []
    plan: list[tuple[str, Any]] = []
    # faulted: long traces (root early, failure late), two-fault episodes, short single faults
    long_pools = ("data", "errtext", "data", "llm", "errtext", "data", "llm", "errtext", "data", "errtext")
    for i in range(n_long):
        plan.append(("f", (long_pools[i % len(long_pools)], True, True, False)))
    for i in range(n_two):
        plan.append(("f", (("data", "errtext", "llm")[i % 3], i % 3 == 0, True, True)))
    single_pools = (
        "errtext",
        "llm",
        "llm",
        "data",
        "errtext",
        "llm",
        "errtext",
        "llm",
        "data",
        "llm",
        "errtext",
        "data",
    )
    for i in range(n_single):
        plan.append(("f", (single_pools[i % len(single_pools)], False, False, False)))
    for _ in range(n_clean):
        plan.append(("c", None))
    kinds = (
        ["sdk_retry"] * 12
        + ["reask"] * 5
        + ["wait"] * 4
        + ["tool_retry"] * 12
        + ["numbers_as_strings"] * 3
        + ["optional_missing"] * 2
        + ["empty_search"] * 2
    )
    for i in range(n_benign):
        plan.append(("b", kinds[i % len(kinds)]))
    for i in range(n_unf):
        plan.append(("u", i % 10 < 3))
    c.rng.shuffle(plan)
    for what, arg in plan:
        if what == "f":
            out.append(c.faulted(*arg))
        elif what == "c":
            out.append(c.clean())
        elif what == "b":
            out.append(c.benign(arg))
        else:
            out.append(c.unfaulted(arg))
    return out
