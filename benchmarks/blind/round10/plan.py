"""The composition: which task, fault, slip and SDK settings each episode gets, from the seed alone."""

from __future__ import annotations

import json
import random
from typing import Any

from benchmarks.blind.round10.agent import Fault, Spec
from benchmarks.blind.round10.forms import LLM_FORMS, TOOL_FORMS, TRANSIENT
from benchmarks.blind.round10.world import BUCKETS, TABLES, TOPICS, USERS, Action, World

READS_LIST = {"list_objects", "get_consumer_lag", "search_catalog"}
STREAM_ONLY = {"stream_cut", "stream_cut_args", "stream_error", "stream_length"}
UNARY_ONLY = {"stale", "body200"}
NON_IDEMPOTENT = {"trigger_job_run", "grant_access", "post_alert"}


def _audit(rng: random.Random, world: World, k: int) -> tuple[str, list[Action], dict[str, Any]]:
    tabs = rng.sample(TABLES, k)
    acts: list[Action] = []
    for i, tb in enumerate(tabs):
        acts.append(Action("run_warehouse_query", {"sql": f"SELECT count(*) AS row_count FROM {tb}"},
                           "row_count", f"r{i}"))
        acts.append(Action("get_table_lineage", {"table": tb}, "owner", f"o{i}"))
    total = sum(world.q("SELECT row_count FROM tables WHERE name=?", tb)[0][0] for tb in tabs)
    names = ",".join(f"r{i}" for i in range(k))
    acts.append(Action("set_dashboard_tile", {"dashboard": "exec-kpis", "tile": "audited_rows",
                                              "value": f"={{sum([{names}])}}"}, "", kind="write"))
    acts.append(Action("post_alert", {"channel": "#data-audit",
                                      "message": f"={{'audited {k} tables: ' + str(sum([{names}]))}}"}, "",
                       kind="write"))
    return (f"Audit row counts and owners of {', '.join(tabs)}; set exec-kpis/audited_rows to the total row "
            "count and post it to #data-audit.", acts,
            {"tiles": {("exec-kpis", "audited_rows"): total}, "alerts": [str(total)]})


def _sweep(rng: random.Random, world: World, k: int) -> tuple[str, list[Action], dict[str, Any]]:
    topics = rng.sample(TOPICS, len(TOPICS))
    places = rng.sample([(b, p) for b in BUCKETS for p in ("2026/12/04/", "2026/12/05/", "2026/12/06/")], k)
    acts: list[Action] = [Action("get_consumer_lag", {"topic": tp}, "partitions", f"l{i}", "list")
                          for i, tp in enumerate(topics)]
    acts += [Action("list_objects", {"bucket": b, "prefix": p}, "objects", f"f{i}", "list")
             for i, (b, p) in enumerate(places)]
    lag = sum(world.q("SELECT sum(lag) FROM topics WHERE name=?", tp)[0][0] for tp in topics)
    files = sum(len(world.list_objects(b, p)["objects"]) for b, p in places)
    ln = ",".join(f"l{i}" for i in range(len(topics)))
    fn = ",".join(f"f{i}" for i in range(k))
    acts.append(Action("set_dashboard_tile", {"dashboard": "pipeline-health", "tile": "total_lag",
                                              "value": f"={{sum([{ln}])}}"}, "", kind="write"))
    acts.append(Action("set_dashboard_tile", {"dashboard": "storage-costs", "tile": "landed_files",
                                              "value": f"={{sum([{fn}])}}"}, "", kind="write"))
    acts.append(Action("post_alert", {"channel": "#platform-daily",
                                      "message": f"={{'lag ' + str(sum([{ln}])) + ', files ' + str(sum([{fn}]))}}"},
                       "", kind="write"))
    return ("Daily platform sweep: total consumer lag of every topic and files landed under "
            + ", ".join(f"{b}/{p}" for b, p in places)
            + "; set pipeline-health/total_lag and storage-costs/landed_files and post both to #platform-daily.",
            acts, {"tiles": {("pipeline-health", "total_lag"): lag, ("storage-costs", "landed_files"): files},
                   "alerts": [f"lag {lag}, files {files}"]})


def make_task(rng: random.Random, world: World, shape: str) -> tuple[str, list[Action], dict[str, Any]]:
    """``shape``: short, audit (long), sweep (long, list results), medium (3-5 table audit)."""
    if shape == "audit":
        return _audit(rng, world, rng.randrange(7, 14))
    if shape == "sweep":
        return _sweep(rng, world, rng.randrange(7, 10))
    if shape == "medium":
        return _audit(rng, world, rng.randrange(3, 6))
    t = rng.choice(TABLES)
    kind = rng.choice(["refresh", "access", "tile", "lag", "storage"])
    if kind == "refresh":
        acts = [Action("search_catalog", {"query": t}, "results", "job", "list"),
                Action("get_job_status", {"job": "{job}"}, "job", "checked"),
                Action("trigger_job_run", {"job": "{job}", "reason": "stale data reported"}, "", kind="write"),
                Action("post_alert", {"channel": "#data-ops", "message": "rerun of {job} started"}, "", kind="write")]
        return (f"{t} looks stale: find its job, rerun it once and tell #data-ops.", acts,
                {"runs": [f"dbt_{t}"], "alerts": [f"dbt_{t}"]})
    if kind == "access":
        u = rng.choice(USERS)
        owner = world.q("SELECT owner FROM tables WHERE name=?", t)[0][0]
        acts = [Action("get_table_lineage", {"table": t}, "owner", "owner"),
                Action("grant_access", {"user": u, "table": t, "role": "reader"}, "", kind="write"),
                Action("post_alert", {"channel": "#access", "message": f"{u} can read {t} (owner {{owner}})"}, "",
                       kind="write")]
        return (f"Grant {u} read access to {t} and let the owner know in #access.", acts,
                {"grants": [(u, t, "reader")], "alerts": [f"owner {owner}"]})
    if kind == "tile":
        n = world.q("SELECT row_count FROM tables WHERE name=?", t)[0][0]
        acts = [Action("run_warehouse_query", {"sql": f"SELECT count(*) AS row_count FROM {t}"}, "row_count", "n"),
                Action("set_dashboard_tile", {"dashboard": "exec-kpis", "tile": f"{t}_rows", "value": "={n}"}, "",
                       kind="write")]
        return (f"Update the exec-kpis tile {t}_rows with today's row count.", acts,
                {"tiles": {("exec-kpis", f"{t}_rows"): n}})
    if kind == "lag":
        tp = rng.choice(TOPICS)
        lag = world.q("SELECT sum(lag) FROM topics WHERE name=?", tp)[0][0]
        acts = [Action("get_consumer_lag", {"topic": tp}, "partitions", "lag", "list"),
                Action("set_dashboard_tile", {"dashboard": "pipeline-health", "tile": f"{tp}_lag", "value": "={lag}"},
                       "", kind="write"),
                Action("post_alert", {"channel": "#streaming", "message": f"{tp} lag is {{lag}}"}, "", kind="write")]
        return (f"Report the total consumer lag of {tp} on pipeline-health and in #streaming.", acts,
                {"tiles": {("pipeline-health", f"{tp}_lag"): lag}, "alerts": [f"lag is {lag}"]})
    b = rng.choice(BUCKETS)
    pfx = rng.choice(["2026/12/04/", "2026/12/05/", "2026/12/06/"])
    n = len(world.list_objects(b, pfx)["objects"])
    acts = [Action("list_objects", {"bucket": b, "prefix": pfx}, "objects", "n", "list"),
            Action("set_dashboard_tile", {"dashboard": "storage-costs", "tile": f"{b}_files", "value": "={n}"}, "",
                   kind="write")]
    return (f"Count the files landed in {b}/{pfx} and show it on storage-costs.", acts,
            {"tiles": {("storage-costs", f"{b}_files"): n}})


def _call_key(action: Action) -> str:
    return action.tool + json.dumps(action.args, sort_keys=True)


TRUNC = ("partial", "page", "total", "cutline")


def compose(seed: int, size: int) -> list[tuple[Spec, dict[str, Any]]]:
    rng = random.Random(seed)
    n_fail = size * 200 // 320
    n_clean = size * 40 // 320
    n_benign = size * 40 // 320
    n_unf = size - n_fail - n_clean - n_benign
    cats = ["faulted_failure"] * n_fail + ["clean_success"] * n_clean + ["benign_success"] * n_benign \
        + ["unfaulted_failure"] * n_unf
    n_long = n_fail * 48 // 200
    n_two = n_fail * 30 // 200
    tool_forms = list(TOOL_FORMS)
    llm_forms = [f for f in LLM_FORMS if f.how != "stale"]   # the Agents SDK skips a replayed call id
    rng.shuffle(tool_forms)
    rng.shuffle(llm_forms)
    second_forms = [f for f in TOOL_FORMS if f.how in ("json", "xml", "text") and f.label != "truncated"]
    data_kinds = ("wrong_value", "truncated", "key_rename", "wrong_value", "truncated", "key_rename", "empty",
                  "malformed_json")
    by_kind = {k: [f for f in tool_forms if f.family == k] for k in set(data_kinds)}
    data_forms = [by_kind[k][n % len(by_kind[k])] for n in range(4) for k in data_kinds]
    error_forms = [f for f in tool_forms if f.how != "data"]
    out = []
    ti = li = di = 0
    for i, cat in enumerate(cats):
        r = random.Random(seed * 100_003 + i)
        wseed = seed * 1000 + i
        world = World(wseed)
        long = cat == "faulted_failure" and i < n_long
        two = cat == "faulted_failure" and n_long <= i < n_long + n_two
        use_llm = cat == "faulted_failure" and not long and not two and i % 5 in (0, 2)
        form = None
        if cat == "faulted_failure" and not use_llm:
            # about a third of the tool faults are data faults (values, cuts, renames, empties), as the
            # taxonomy's tool-result kinds weigh them; the rest cycle through the published error forms
            if i % 3 == 0:
                form = data_forms[di % len(data_forms)]
                di += 1
            else:
                form = error_forms[ti % len(error_forms)]
                ti += 1
        trunc = form is not None and form.extra.get("op") in TRUNC
        if long:
            shape = "sweep" if trunc or r.random() < 0.3 else "audit"
        elif two:
            shape = "sweep" if trunc else "medium"
        else:
            shape = "short"
        text, acts, expect = make_task(r, world, shape)
        llm_form = llm_forms[li % len(llm_forms)] if use_llm else None
        while llm_form is not None and llm_form.how == "stale" and not any(
                a.tool in NON_IDEMPOTENT for a in acts[1:]):
            text, acts, expect = make_task(r, world, shape)
        # faults are placed on reads whose arguments do not depend on earlier answers
        reads = [j for j, a in enumerate(acts) if a.kind != "write"
                 and not any("{" in str(v) for v in a.args.values())]
        if trunc and not any(acts[j].kind == "list" for j in reads):
            form = next(f for f in TOOL_FORMS if f.extra.get("op") == "shift")
            trunc = False
        spec = Spec(f"r10-{seed}-{i:04d}", text, wseed, acts, expect, r.randrange(17), r.random() < 0.3,
                    r.randrange(3), 60 if shape in ("audit", "sweep") else 14, patience=r.choice([0, 1, 1]))
        label: dict[str, Any] = {"task_id": spec.task_id, "category": cat}
        if cat == "faulted_failure" and use_llm:
            form = llm_form
            assert form is not None
            li += 1
            if form.how in STREAM_ONLY:
                spec.streamed = True
            if form.how in UNARY_ONLY:
                spec.streamed = False
            writes = [j for j, a in enumerate(acts) if a.kind == "write"]
            at = r.randrange(len(acts))
            if form.how == "stale":
                at = next(j for j, a in enumerate(acts) if a.tool in NON_IDEMPOTENT) + 1
            elif form.how in ("mojibake_args", "symbols_args"):
                at = writes[0]
            if form.how in ("args_empty", "args_cut", "stream_cut_args"):
                spec.patience = 0
            if form.how == "slow_deadline":
                spec.deadline, spec.timeout = 2.5, 6.0
            if form.how == "slow_timeout":
                spec.timeout, spec.max_retries = 1.0, r.randrange(2)
            spec.llm_faults.append(Fault(form.name, at, form.how in ("status", "drop", "slow_timeout")))
        elif cat == "faulted_failure":
            assert form is not None
            writes_text = " ".join(str(a.args) for a in acts if a.kind == "write")
            used = [j for j in reads if acts[j].save and acts[j].save in writes_text] or reads
            cands = [j for j in used if acts[j].kind == "list"] if trunc else used
            if long:
                cands = cands[:4]
            if two:
                cands = [j for j in cands if j < reads[-1]][:3]
            at = r.choice(cands)
            spec.tool_faults.append(Fault(form.name, -1, persist=True, call=_call_key(acts[at])))
            if long or two:
                spec.slip = {"skip_bad": True}
            if two:
                later = [j for j in reads if j > at]
                second = second_forms[(i * 7) % len(second_forms)]
                spec.tool_faults.append(Fault(second.name, -1, persist=True, call=_call_key(acts[r.choice(later)])))
                label["second_form"] = second.name
        if cat == "faulted_failure":
            assert form is not None
            label.update(fault_type=form.label, target=form.target, form=form.name, family=form.family,
                         source=form.source)
        elif cat == "benign_success":
            transient = [f for f in TOOL_FORMS if f.label in TRANSIENT and f.how != "data"]
            spec.patience = 1
            mode = i % 5
            if mode == 0:
                fname = ["bedrock_throttling_429", "vertex_503", "runpod_502", "bag_500"][(i // 5) % 4]
                spec.llm_faults.append(Fault(fname, r.randrange(len(acts))))
                spec.max_retries = 2
                label.update(form="sdk_retry_recovered:" + fname)
            elif mode == 1:
                fname = ["slow_benign", "bag_stale_repeat", "slow_benign", "hf_stale_repeat"][(i // 5) % 4]
                writes = [j for j, a in enumerate(acts) if a.kind == "write"]
                spec.llm_faults.append(Fault(fname, writes[0] + 1 if "stale" in fname else r.randrange(len(acts))))
                label.update(form="slow_reply_waited_out" if fname == "slow_benign"
                             else "stale_replay_skipped:" + fname)
            else:
                f = transient[(i * 3) % len(transient)]
                spec.tool_faults.append(Fault(f.name, -1, call=_call_key(acts[r.choice(reads)])))
                label.update(form="tool_retry_recovered:" + f.name)
            label.update(fault_type="none", family="benign")
        elif cat == "unfaulted_failure":
            writes = [j for j, a in enumerate(acts) if a.kind == "write"]
            kind = ["wrong_arg", "give_up", "unknown_tool", "loop", "bad_json", "absorbed_then_wrong"][i % 6]
            if kind in ("wrong_arg", "absorbed_then_wrong"):
                w = acts[writes[0]]
                key = next(k for k in ("value", "user", "job", "channel") if k in w.args)
                spec.slip = {"kind": kind, "at": writes[0], "key": key}
                if kind == "absorbed_then_wrong":
                    f = [x for x in TOOL_FORMS if x.label in TRANSIENT and x.how != "data"][i % 20]
                    spec.patience = 1
                    spec.tool_faults.append(Fault(f.name, -1, call=_call_key(acts[reads[0]])))
            elif kind == "loop":
                spec.slip = {"kind": kind, "at": 1}
                spec.max_turns = 8
            else:
                spec.slip = {"kind": kind, "at": r.randrange(len(acts))}
                spec.patience = 0
            label.update(fault_type="none_found", form=f"model_{kind}", family="own_slip")
        else:
            label.update(fault_type="none", family="clean")
        label.setdefault("source", "SIMULATED model (this corpus)")
        out.append((spec, label))
    return out
