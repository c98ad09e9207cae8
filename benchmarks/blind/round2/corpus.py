"""The scenarios: which episode meets which fault where, and what the agent and the model do about it.

Every choice comes from one ``random.Random(seed)``. A scenario is a plain dict (the episode "spec"). Faults are
placed on the model's planned actions (``tool:<name>#<n>`` or ``final``) or on the n-th call of a tool, found by
simulating the fault-free run; the reactions make each fault fail the task through the model's own behaviour
(it gives up, trusts a wrong or partial answer, skips an item, repeats a call that had in fact gone through).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from .forms import FORMS, Form, L, T
from .scripted import Final, Obs, ToolCall, decide
from .world import MUTATING, TEAMS, build_world

OA_MODELS = ["gpt-4.1-mini", "deepseek-chat", "mistral-large-latest", "Qwen2.5-32B-Instruct", "llama3.1:70b"]
AN_MODELS = ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"]
FORM_MODEL = {"ollama_404_model": "llama3.1:70b", "llamacpp_400_context": "Qwen2.5-32B-Instruct",
              "llamacpp_503_loading": "Qwen2.5-32B-Instruct", "vllm_500_internal": "Qwen2.5-32B-Instruct",
              "deepseek_402_balance": "deepseek-chat", "deepseek_503_overloaded": "deepseek-chat",
              "deepseek_insufficient_resource": "deepseek-chat", "mistral_401": "mistral-large-latest",
              "mistral_model_length": "mistral-large-latest", "gemini_compat_429_list": "gemini-2.5-flash",
              "azure_openai_429_tpm": "gpt-4.1-mini", "azure_400_content_filter": "gpt-4.1-mini",
              "azure_finish_content_filter": "gpt-4.1-mini", "openrouter_finish_error": "meta-llama/llama-3.3-70b",
              "openrouter_midstream_error": "meta-llama/llama-3.3-70b"}
RETRYABLE = {408, 409, 429, 500, 502, 503, 504, 529}
ERRORISH = ("text", "raise", "rpc", "mcp_http")


def simulate(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The fault-free run: the model's action keys in order, with the arguments of each tool call."""
    from .episode import make_world

    world = make_world(spec)
    turns: list[dict[str, Any]] = []
    out: list[tuple[str, dict[str, Any]]] = []
    for _ in range(80):
        action, m = decide(spec["task"], {}, None, turns)
        if isinstance(action, Final):
            out.append(("final", {}))
            break
        assert isinstance(action, ToolCall)
        out.append((f"tool:{action.name}#{m.counts[action.name]}", action.args))
        res = world.call(action.name, action.args)
        turns.append({"origin": "model", "results": [Obs(json.dumps(res))]})
    return out


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.specs: list[dict[str, Any]] = []
        self.provider_count: Counter = Counter()
        self.transport_count: Counter = Counter()
        self.form_use: Counter = Counter()
        self.benign_use: Counter = Counter()  # absorbed faults spread over their own forms

    # ------------------------------------------------------------------ helpers
    def pick_provider(self, want: str = "both") -> str:
        if want in ("openai", "anthropic"):
            return want
        a, b = self.provider_count["openai"], self.provider_count["anthropic"]
        if a == b:
            return self.rng.choice(["openai", "anthropic"])
        return "openai" if a < b else "anthropic"

    def pick_transport(self, want: str = "both") -> str:
        if want in ("plain", "mcp"):
            return want
        total = sum(self.transport_count.values())
        share = self.transport_count["mcp"] / total if total else 0.0
        return "mcp" if share < 1 / 3 and self.rng.random() < 0.6 else "plain"

    def least_used(self, forms: list[Form], use: Counter | None = None) -> Form:
        use = self.form_use if use is None else use
        low = min(use[f.name] for f in forms)
        cands = sorted((f for f in forms if use[f.name] == low), key=lambda f: f.name)
        f = self.rng.choice(cands)
        use[f.name] += 1
        if use is not self.form_use:
            self.form_use[f.name] += 1
        return f

    def base(self, category: str, ttype: str, *, provider: str = "both", transport: str = "both",
             stream: bool | None = None, n_alerts: int | None = None, model: str | None = None,
             need_nonascii: bool = False, need_tool: str | None = None, long: bool = False,
             min_plan: int = 15, accept: Any = None) -> dict[str, Any]:
        rng = self.rng
        prov = self.pick_provider(provider)
        tr = self.pick_transport(transport)
        for _ in range(200):
            wseed = rng.randrange(1, 10**7)
            if ttype == "sweep":
                na = n_alerts or rng.randint(3, 5)
            else:
                na = n_alerts or rng.randint(2, 4)
            wcfg = {"seed": wseed, "n_alerts": na, "unhealthy_share": 0.5, "sweep": ttype == "sweep"}
            world = build_world(wseed, n_alerts=na, unhealthy_share=0.5, sweep=ttype == "sweep")
            a0 = world.alerts[0]
            if ttype == "page":
                teams = sorted(TEAMS)
                if need_nonascii:
                    teams = [t for t in teams if not world.oncall[t]["primary"]["name"].isascii()]
                    if not teams:
                        continue
                task = {"type": "page", "team": rng.choice(teams), "alert_id": a0["id"]}
            elif ttype == "remediate":
                task = {"type": "remediate", "alert_id": a0["id"], "alert_name": a0["name"], "service": a0["service"]}
            elif ttype == "report":
                svcs = sorted(world.services)
                rng.shuffle(svcs)
                k = min(len(svcs), rng.randint(14, 18)) if long else rng.randint(3, 4)
                task = {"type": "report", "services": sorted(svcs[:k]), "metric": rng.choice(["p99_ms", "error_rate"])}
            elif ttype == "rollback":
                task = {"type": "rollback", "service": a0["service"]}
            else:
                task = {"type": "sweep"}
            spec = {"task_id": "", "category": category, "provider": prov, "tools": tr,
                    "stream": (rng.random() < 0.4) if stream is None else stream,
                    "model": model or rng.choice(OA_MODELS if prov == "openai" else AN_MODELS),
                    "sdk_retries": rng.choice([0, 0, 1, 2]), "agent_retries": 0, "timeout": 10.0, "deadline": None,
                    "strict": True, "task": task, "world": wcfg, "llm_faults": [], "tool_faults": [],
                    "reactions": {}, "quirk": None, "root": None, "expect": "success",
                    "meta": {"long": False, "two_fault": False}}
            plan = simulate(spec)
            if need_tool and not any(k.startswith(f"tool:{need_tool}#") for k, _ in plan):
                continue
            if long and not (min_plan <= len(plan) <= 30):
                continue
            if accept is not None and not accept(world, plan):
                continue
            spec["_plan"] = plan
            spec["meta"]["long"] = long
            return spec
        raise RuntimeError(f"no world fits {ttype} {need_tool}")

    def add(self, spec: dict[str, Any]) -> None:
        self.provider_count[spec["provider"]] += 1
        self.transport_count[spec["tools"]] += 1
        spec.pop("_plan", None)
        self.specs.append(spec)

    @staticmethod
    def fid(spec: dict[str, Any]) -> str:
        return f"f{len(spec['llm_faults']) + len(spec['tool_faults']) + 1}"

    def add_llm(self, spec: dict[str, Any], form: Form, on: dict[str, Any], attempts: Any = (0,)) -> str:
        fid = self.fid(spec)
        spec["llm_faults"].append({"id": fid, "form": form.name, "on": on, "attempts": list(attempts)
                                   if attempts != "all" else "all"})
        if form.kind in ("hang", "stream_stall"):
            spec["timeout"] = 2.0
        if form.kind.startswith("stream"):
            spec["stream"] = True
        if form.name in FORM_MODEL and spec["provider"] == "openai":
            spec["model"] = FORM_MODEL[form.name]
        return fid

    def add_tool(self, spec: dict[str, Any], form: Form, tool: str, occ: Any = 1) -> str:
        fid = self.fid(spec)
        spec["tool_faults"].append({"id": fid, "form": form.name, "tool": tool, "occ": occ})
        return fid

    def keys(self, spec: dict[str, Any]) -> list[str]:
        return [k for k, _ in spec["_plan"]]

    # ------------------------------------------------------------------ LLM single faults
    def llm_single(self, form: Form) -> dict[str, Any]:
        rng = self.rng
        k = form.kind
        ttype = rng.choice(["page", "remediate", "report", "rollback", "sweep"])
        need_nonascii = False
        if k == "mojibake":
            ttype, need_nonascii = "page", True
        if k == "stale":
            ttype = rng.choice(["page", "remediate", "rollback"])
        if k == "slow":
            ttype = rng.choice(["page", "rollback", "report"])
        spec = self.base("faulted_failure", ttype, provider=form.provider, need_nonascii=need_nonascii,
                         stream=True if k.startswith("stream") else None)
        keys = self.keys(spec)
        calls = [x for x in keys if x != "final"]
        if k == "stale":
            idx = [i for i, x in enumerate(keys[:-1]) if x.split(":")[1].split("#")[0] in
                   {"page_oncall", "restart_service", "rollback_deploy", "create_incident"}]
            on = keys[rng.choice(idx) + 1]
        elif form.needs == "final" or k == "mojibake":
            on = "final"
        elif form.needs == "call":
            if k == "wrong_args":
                good = [x for x in calls if x.split(":")[1].split("#")[0] in MUTATING - {"create_incident"}
                        or x.startswith(("tool:get_oncall", "tool:query_metrics", "tool:get_runbook"))]
                on = rng.choice(good or calls)
            else:
                on = rng.choice(calls)
        else:
            on = rng.choice(keys)
        attempts: Any = [0]
        status = form.params.get("status")
        retry_after = form.params.get("headers", {}).get("retry-after")
        retryable = (k == "http" and status in RETRYABLE) or k in ("reset", "disconnect", "hang")
        r = rng.random()
        spec["sdk_retries"] = 0
        if retryable and r < 0.25 and (retry_after is None or retry_after.startswith("{")):
            spec["sdk_retries"] = 2
            attempts = [0, 1, 2]
        elif k in ("http", "reset", "disconnect", "hang", "error_in_200") and r < 0.4:
            spec["agent_retries"] = 1
            attempts = [0, 1]
        elif k in ("http",) and not retryable and rng.random() < 0.5:
            spec["sdk_retries"] = 2  # not retried by the SDK anyway (4xx)
        if k == "slow":
            spec["deadline"] = 1.5
        spec["root"] = self.add_llm(spec, form, {"action": on}, attempts)
        spec["expect"] = "failure"
        return spec

    # ------------------------------------------------------------------ tool single faults
    def tool_single(self, form: Form) -> dict[str, Any]:
        rng = self.rng
        k = form.kind
        by_task = {"page": {"get_oncall", "page_oncall"},
                   "remediate": {"get_service_status", "get_runbook", "restart_service", "scale_service",
                                 "rollback_deploy", "search_logs", "create_incident"},
                   "report": {"query_metrics"}, "rollback": {"search_logs", "rollback_deploy"},
                   "sweep": {"list_alerts", "get_service_status", "restart_service", "scale_service",
                             "create_incident"}}
        data = k.startswith("data:")
        dk = k[5:] if data else ""
        fit = {"es_partial": ["list_alerts", "search_logs"], "half_list": ["list_alerts", "search_logs"],
               "incomplete": ["search_logs"], "k8s_continue": ["list_alerts"], "stale_healthy": ["get_service_status"],
               "version_shift": ["search_logs"]}
        tools = list(fit.get(dk, form.tools))
        tool = rng.choice(sorted(tools))
        tasks = sorted(t for t, s in by_task.items() if tool in s)
        if dk in ("es_partial", "half_list", "incomplete", "version_shift") and tool == "search_logs":
            tasks = ["rollback"]
        if dk in ("es_partial", "half_list", "k8s_continue") and tool == "list_alerts":
            tasks = ["sweep"]
        if dk == "stale_healthy":
            tasks = ["sweep"]
        if dk == "runbook_swap":
            tasks = ["remediate"]
        if dk in ("v2rename",) and tool == "get_service_status":
            tasks = ["sweep", "remediate"]
        ttype = rng.choice(tasks)
        spec = self.base("faulted_failure", ttype, transport=form.transport, need_tool=tool,
                         n_alerts=rng.randint(3, 5) if ttype == "sweep" else None)
        spec["sdk_retries"] = rng.choice([0, 2])
        occ: Any = 1
        n_calls = sum(1 for x in self.keys(spec) if x.startswith(f"tool:{tool}#"))
        if n_calls > 1 and rng.random() < 0.3 and not data:
            occ = rng.randint(1, n_calls)
        key = f"{tool}#{occ}"
        if k in ERRORISH:
            if form.executes and tool in {"restart_service", "page_oncall", "rollback_deploy", "create_incident"} \
                    and rng.random() < 0.6:
                spec["reactions"][key] = "retry"  # it had gone through: the retry applies it twice
            elif rng.random() < 0.3:
                occ = "all"
                spec["reactions"].update({f"{tool}#{i}": "retry" for i in range(1, 5)})
        elif data and dk in ("v2rename",):
            spec["reactions"][key] = "accept"
        elif data and dk == "proto3" and tool in ("create_incident", "page_oncall") and rng.random() < 0.5:
            spec["reactions"][key] = "accept"
        spec["root"] = self.add_tool(spec, form, tool, occ)
        spec["expect"] = "failure"
        return spec

    # ------------------------------------------------------------------ long traces
    def long_trace(self) -> dict[str, Any]:
        rng = self.rng
        variant = rng.choice(["list_trunc", "status_err", "status_data", "llm_status", "llm_remedy", "stale_restart",
                              "remedy_err", "report_long", "trunc_args"])
        if variant == "report_long":
            spec = self.base("faulted_failure", "report", n_alerts=rng.randint(12, 16), long=True)
            forms = [FORMS["adjacent_window_metrics"], FORMS["api_v2_field_rename"]]
            f = self.least_used(forms)
            if f.name == "api_v2_field_rename":
                spec["reactions"]["query_metrics#1"] = "accept"
            spec["root"] = self.add_tool(spec, f, "query_metrics", 1)
        else:
            trunc_form = None
            if variant == "trunc_args":
                trunc_form = FORMS["finish_length_args" if rng.random() < 0.5 else "anthropic_max_tokens_tool_use"]

            def fits(world: Any, plan: list[tuple[str, dict[str, Any]]]) -> bool:
                if variant == "list_trunc":  # the cut list still leaves a long sweep
                    kept = world.alerts[: len(world.alerts) // 2]
                    return 3 + len(kept) + sum(not world.services[a["service"]].healthy for a in kept) >= 15
                if variant == "stale_restart":
                    first = next(k for k, _ in plan if k.startswith(("tool:restart_service", "tool:scale_service")))
                    return first.startswith("tool:restart_service")
                return True

            spec = self.base("faulted_failure", "sweep", n_alerts=rng.randint(14, 18) if variant == "list_trunc"
                             else rng.randint(9, 15), long=True, min_plan=17 if variant != "list_trunc" else 15,
                             provider=trunc_form.provider if trunc_form else "both", accept=fits)
            keys = self.keys(spec)
            if variant == "list_trunc":
                f = self.least_used([FORMS[n] for n in ("es_timed_out_partial", "total_count_mismatch",
                                                        "k8s_continue_token")])
                spec["root"] = self.add_tool(spec, f, "list_alerts", 1)
            elif variant in ("status_err", "status_data"):
                if variant == "status_err":
                    cands = [f for f in T if f.kind in ERRORISH and "get_service_status" in f.tools
                             and (f.transport == "both" or f.transport == "mcp")]
                else:
                    cands = [FORMS[n] for n in ("stale_status_cache", "api_v2_field_rename", "empty_string_body",
                                                "proxy_buffer_cut", "dynamodb_empty_item",
                                                "concat_serializer_unbalanced")]
                f = self.least_used(cands)
                if f.transport == "mcp":
                    spec["tools"] = "mcp"
                spec["reactions"]["get_service_status#1"] = "accept" if f.name == "api_v2_field_rename" else "skip"
                spec["root"] = self.add_tool(spec, f, "get_service_status", 1)
            elif variant == "remedy_err":
                first = next(x for x in keys if x.startswith(("tool:restart_service", "tool:scale_service")))
                tool = first.split(":")[1].split("#")[0]
                cands = [f for f in T if f.kind in ERRORISH and tool in f.tools and not f.executes]
                f = self.least_used(cands)
                if f.transport == "mcp":
                    spec["tools"] = "mcp"
                spec["reactions"][f"{tool}#1"] = "skip"
                spec["root"] = self.add_tool(spec, f, tool, 1)
            elif variant == "llm_status":
                cands = [FORMS[n] for n in ("replacement_chars_args", "symbol_noise_args")]
                f = self.least_used(cands)
                spec["reactions"]["get_service_status#1"] = "skip"
                spec["root"] = self.add_llm(spec, f, {"action": "tool:get_service_status#1"})
            elif variant == "trunc_args":
                f = trunc_form
                assert f is not None
                self.form_use[f.name] += 1
                spec["strict"] = False
                spec["reactions"]["get_service_status#1"] = "skip"
                spec["root"] = self.add_llm(spec, f, {"action": "tool:get_service_status#1"})
            elif variant == "llm_remedy":
                first = next(x for x in keys if x.startswith(("tool:restart_service", "tool:scale_service")))
                tool = first.split(":")[1].split("#")[0]
                f = FORMS["semantic_cache_hit"]
                self.form_use[f.name] += 1
                spec["reactions"][f"{tool}#1"] = "skip"
                spec["root"] = self.add_llm(spec, f, {"action": first})
            else:  # stale_restart
                idx = [i for i, x in enumerate(keys[:-1]) if x.startswith("tool:restart_service")]
                if not idx:
                    return self.long_trace()
                f = FORMS["cache_replay"]
                self.form_use[f.name] += 1
                spec["root"] = self.add_llm(spec, f, {"action": keys[idx[0] + 1]})
        spec["sdk_retries"] = rng.choice([0, 2])
        spec["expect"] = "failure"
        return spec

    # ------------------------------------------------------------------ two faults
    def two_fault(self) -> dict[str, Any]:
        rng = self.rng
        variant = rng.choice(["runbook_logs", "runbook_final", "llm_runbook_logs", "report_fallback",
                              "runbook_logs", "runbook_remedy"])
        if variant == "report_fallback":
            spec = self.base("faulted_failure", "report")
            n = len(spec["task"]["services"])
            occ = rng.randint(1, n)
            f1 = self.least_used([f for f in T if f.kind in ERRORISH and "query_metrics" in f.tools
                                  and f.transport == "both"])
            spec["reactions"][f"query_metrics#{occ}"] = "fallback"
            spec["root"] = self.add_tool(spec, f1, "query_metrics", occ)
            f2 = self.least_used([f for f in T if "get_service_status" in f.tools and f.transport == "both"
                                  and (f.kind in ERRORISH or f.kind == "data:stale_healthy")])
            self.add_tool(spec, f2, "get_service_status", 1)
        else:
            spec = self.base("faulted_failure", "remediate")
            runbook_forms = [f for f in T if "get_runbook" in f.tools and f.transport == "both"
                             and (f.kind in ERRORISH or f.kind in ("data:null", "data:empty_obj", "data:cut",
                                                                    "data:empty_str", "data:unbalanced"))]
            log_forms = [f for f in T if "search_logs" in f.tools and f.transport == "both"
                         and (f.kind in ERRORISH or f.kind in ("data:es_partial", "data:empty_list", "data:cut",
                                                                "data:empty_str", "data:csv_partial",
                                                                "data:unbalanced"))]
            spec["reactions"]["get_runbook#1"] = "fallback"
            if variant == "llm_runbook_logs":
                f1 = self.least_used([FORMS["symbol_noise_args"], FORMS["replacement_chars_args"]])
                spec["root"] = self.add_llm(spec, f1, {"action": "tool:get_runbook#1"})
            else:
                f1 = self.least_used(runbook_forms)
                spec["root"] = self.add_tool(spec, f1, "get_runbook", 1)
            if variant in ("runbook_logs", "llm_runbook_logs"):
                f2 = self.least_used(log_forms)
                self.add_tool(spec, f2, "search_logs", 1)
            elif variant == "runbook_final":
                cands = [f for f in L if f.kind in ("truncate_text", "filter", "empty", "schema_content",
                                                    "finish_error") and f.provider in ("both", spec["provider"])]
                f2 = self.least_used(cands)
                if f2.needs == "final" or f2.kind in ("filter", "empty", "schema_content", "finish_error"):
                    self.add_llm(spec, f2, {"action": "final"})
            else:  # runbook_remedy: the remediation call hits a second, fatal fault
                kind = spec["world"]
                from .episode import make_world
                w = make_world(spec)
                tool = {"restart": "restart_service", "scale": "scale_service", "rollback": "rollback_deploy"}[
                    w.runbooks[spec["task"]["alert_name"]]["action"]]
                del kind
                f2 = self.least_used([f for f in T if f.kind in ERRORISH and tool in f.tools and f.transport == "both"
                                      and not f.executes])
                self.add_tool(spec, f2, tool, 1)
        spec["meta"]["two_fault"] = True
        spec["expect"] = "failure"
        return spec

    # ------------------------------------------------------------------ successes and model slips
    def clean(self, long: bool = False) -> dict[str, Any]:
        ttype = "sweep" if long else self.rng.choice(["page", "remediate", "report", "rollback", "sweep"])
        return self.base("clean_success", ttype, n_alerts=self.rng.randint(8, 15) if long else None, long=long)

    def benign(self, long: bool = False) -> dict[str, Any]:
        rng = self.rng
        ttype = "sweep" if long else rng.choice(["page", "remediate", "report", "rollback", "sweep"])
        side = rng.choice(["llm", "llm", "tool", "tool", "agent"])
        spec = self.base("benign_success", ttype, n_alerts=rng.randint(8, 15) if long else None, long=long)
        keys = self.keys(spec)
        if side == "llm":
            names = ["azure_openai_429_tpm", "anthropic_529_overloaded", "anthropic_429_rate_limit",
                     "llamacpp_503_loading", "deepseek_503_overloaded", "kong_502_upstream", "envoy_503_reset",
                     "haproxy_503_html", "conn_reset", "server_disconnect", "client_read_timeout",
                     "anthropic_500_api_error", "vllm_500_internal", "gfe_502_html", "envoy_429_local",
                     "slow_answer"]
            f = self.least_used([FORMS[n] for n in names if FORMS[n].provider in ("both", spec["provider"])],
                                self.benign_use)
            on = rng.choice(keys)
            if f.kind == "slow":
                spec["sdk_retries"] = 0
                self.add_llm(spec, f, {"action": on}, [0])
            else:
                spec["sdk_retries"] = 2
                self.add_llm(spec, f, {"action": on}, rng.choice([[0], [0], [0, 1]]))
        elif side == "agent":
            names = ["sse_cut_mid_event", "openrouter_midstream_error", "anthropic_midstream_overloaded",
                     "traefik_502", "nginx_504_html", "apigee_504_target_timeout", "aws_apigw_504"]
            f = self.least_used([FORMS[n] for n in names if FORMS[n].provider in ("both", spec["provider"])],
                                self.benign_use)
            spec["sdk_retries"] = 0
            spec["agent_retries"] = 1
            self.add_llm(spec, f, {"action": rng.choice(keys)}, [0])
        else:
            calls = [x for x in keys if x != "final"]
            on = rng.choice(calls)
            tool = on.split(":")[1].split("#")[0]
            occ = int(on.split("#")[1])
            cands = [f for f in T if tool in f.tools and (f.kind in ERRORISH and (not f.executes or tool not in MUTATING
                                                                                   or tool == "scale_service"))
                     or (tool in f.tools and f.kind in ("data:cut", "data:empty_str", "data:unbalanced"))]
            cands = [f for f in cands if f.label in ("rate_limit", "timeout", "connection", "error", "malformed_json",
                                                     "empty")]
            f = self.least_used(cands, self.benign_use)
            if f.transport == "mcp":
                spec["tools"] = "mcp"
            spec["reactions"][f"{tool}#{occ}"] = "retry"
            self.add_tool(spec, f, tool, occ)
        return spec

    def unfaulted(self, long: bool = False) -> dict[str, Any]:
        rng = self.rng
        if long:
            quirk = "skip_one"
            spec = self.base("unfaulted_failure", "sweep", n_alerts=rng.randint(8, 15), long=True)
        else:
            quirk = rng.choice(["wrong_pick", "arith", "prose_final", "typo_arg", "missing_arg", "empty_args",
                                "bad_json_args", "ghost_tool", "give_up_early", "loop", "double_action",
                                "wrong_version", "prose_final", "typo_arg"])
            ttype = {"wrong_pick": "page", "arith": rng.choice(["report", "remediate"]), "typo_arg":
                     rng.choice(["page", "remediate"]), "missing_arg": "remediate", "empty_args": "page",
                     "bad_json_args": "page", "ghost_tool": "page", "double_action": rng.choice(["remediate",
                                                                                               "rollback"]),
                     "wrong_version": "rollback"}.get(quirk) or rng.choice(["page", "remediate", "report", "rollback"])
            provider = "openai" if quirk == "bad_json_args" else "both"
            spec = None
            for _ in range(50):
                spec = self.base("unfaulted_failure", ttype, provider=provider)
                keys = self.keys(spec)
                if quirk in ("missing_arg", "double_action") and ttype == "remediate" and \
                        not any(x.startswith("tool:restart_service") for x in keys):
                    continue
                if quirk == "arith" and ttype == "remediate" and not any(x.startswith("tool:scale_service")
                                                                         for x in keys):
                    continue
                break
            assert spec is not None
        spec["quirk"] = {"kind": quirk}
        if rng.random() < 0.3:  # a fault the SDK or the model absorbed, before the model's own mistake
            keys = self.keys(spec)
            f = self.least_used([FORMS[n] for n in ("azure_openai_429_tpm", "anthropic_529_overloaded",
                                                    "conn_reset", "deepseek_503_overloaded", "kong_502_upstream")
                                 if FORMS[n].provider in ("both", spec["provider"])])
            spec["sdk_retries"] = 2
            self.add_llm(spec, f, {"action": keys[0]}, [0])
            spec["meta"]["absorbed"] = f.name
        spec["expect"] = "failure"
        return spec


def composition(n: int) -> dict[str, int]:
    scale = n / 320
    c = {"single": round(120 * scale), "long": round(50 * scale), "two": round(30 * scale),
         "clean": round(40 * scale), "benign": round(40 * scale), "unfaulted": round(40 * scale)}
    c["single"] += n - sum(c.values())
    return c


def build_specs(seed: int, n: int = 320) -> list[dict[str, Any]]:
    g = Gen(seed)
    comp = composition(n)
    rng = g.rng
    out: list[dict[str, Any]] = []
    # long traces and two-fault episodes first, so single-fault slots fill the forms they left unused
    for _ in range(comp["long"]):
        out.append(g.long_trace())
        g.add(out[-1])
    for _ in range(comp["two"]):
        out.append(g.two_fault())
        g.add(out[-1])
    root_labels: Counter = Counter()
    for s in out:
        f = next(x for x in s["llm_faults"] + s["tool_faults"] if x["id"] == s["root"])
        root_labels[(FORMS[f["form"]].side, FORMS[f["form"]].label)] += 1
    n_llm = comp["single"] // 2
    for i in range(comp["single"]):
        side_forms = L if i < n_llm else T
        side = "llm" if i < n_llm else "tool"
        labels = sorted({f.label for f in side_forms})
        low = min(root_labels[(side, lab)] for lab in labels)
        lab = rng.choice([x for x in labels if root_labels[(side, x)] == low])
        f = g.least_used([x for x in side_forms if x.label == lab])
        spec = g.llm_single(f) if side == "llm" else g.tool_single(f)
        root_labels[(side, lab)] += 1
        spec["meta"]["form"] = f.name
        out.append(spec)
        g.add(spec)
    n_long_clean = round(comp["clean"] * 0.3)
    for i in range(comp["clean"]):
        out.append(g.clean(long=i < n_long_clean))
        g.add(out[-1])
    for i in range(comp["benign"]):
        out.append(g.benign(long=i < round(comp["benign"] * 0.15)))
        g.add(out[-1])
    for i in range(comp["unfaulted"]):
        out.append(g.unfaulted(long=i < round(comp["unfaulted"] * 0.15)))
        g.add(out[-1])
    rng.shuffle(out)
    for i, s in enumerate(out, 1):
        s["task_id"] = f"r2-{i:04d}"
        s.pop("_plan", None)
    return out


def label_for(spec: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    cat = spec["category"]
    row: dict[str, Any] = {"task_id": spec["task_id"]}
    if cat != "faulted_failure":
        row.update({"fault_type": "none", "category": cat})
        faults = spec["llm_faults"] + spec["tool_faults"]
        if faults:
            f = FORMS[faults[0]["form"]]
            row.update({"form": f.name, "family": f.family, "source": f.source})
        if spec.get("quirk"):
            row["form"] = ("quirk:" + spec["quirk"]["kind"]) + (f"+{row['form']}" if "form" in row else "")
            row["family"] = "model-slip"
        return row
    root = spec["root"]
    fault = next(f for f in spec["llm_faults"] + spec["tool_faults"] if f["id"] == root)
    form = FORMS[fault["form"]]
    step = next(i for i, e in enumerate(events) if e.get("fault") == root)
    row.update({"fault_type": form.label, "target": form.target, "step": step, "category": cat,
                "form": form.name, "family": form.family, "source": form.source})
    if form.note:
        row["note"] = form.note
    return row
