"""Simulated, labelled episodes for testing and benchmarking diagnosers before a campaign exists.

Every episode here is SIMULATED: a scripted agent calls a handful of scripted tools; faults are
applied the way the injectors apply them (docs/design.md 3.1-3.3) and the spans get the attributes the
transport and the tool injector record, computed with the same signal functions. The ``heldout``
variant uses wordings, ratios and corruption modes the rules were not written against (other
error texts, other truncation ratios, cp1252 mojibake and replacement characters, real HTTP and
stream faults), so rule accuracy on it says something about generality.
All randomness comes from ``random.Random(seed)``.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import signals
from agentchaos_otel.records import EpisodeTrace, StepRecord

SIMULATED_NOTE = "simulated episodes (benchmarks.corpora.synthetic), not measurements of a real agent"

TOOLS: dict[str, dict[str, Any]] = {
    "get_weather": {"type": "object", "properties": {"city": {"type": "string"},
                                                     "unit": {"type": "string", "enum": ["c", "f"]}},
                    "required": ["city"]},
    "search_flights": {"type": "object", "properties": {"origin": {"type": "string"},
                                                        "destination": {"type": "string"},
                                                        "date": {"type": "string"}},
                       "required": ["origin", "destination", "date"]},
    "get_stock_price": {"type": "object", "properties": {"symbol": {"type": "string"}},
                        "required": ["symbol"]},
    "list_files": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
REQUEST_TOOLS = [{"type": "function", "function": {"name": n, "parameters": p}} for n, p in TOOLS.items()]
CITIES = ["Zürich", "Kyoto", "Lisbon", "São Paulo", "Montréal", "Oslo", "Reykjavík", "Chennai"]
WORDS = ("the forecast shows mild conditions and light wind across the region today while prices "
         "remained stable after the morning session and the files were listed in the requested "
         "directory so the next step is to compare these values before answering").split()

# Wordings the rules were written against (docs/design.md 3.1) and held-out ones they were not.
SEEN_TEXT = {
    "error": ["[API ERROR] HTTP 500: Internal Server Error. The server encountered an unexpected condition."],
    "timeout": ["[TIMEOUT] The request timed out. The server did not respond within the expected time."],
    "schema": ['{"error": "content_policy_violation", "message": "This response has been filtered."}'],
}
HELDOUT_TEXT = {
    "error": ["upstream connect error or disconnect/reset before headers. reset reason: overflow",
              '<html><head><title>500 Internal Server Error</title></head><body>oops</body></html>',
              "Error: The model produced an invalid response. Please retry your request.",
              "503 Service Unavailable: the engine is currently overloaded, please try again later"],
    "timeout": ["Request timed out after 600 seconds.", "504 Gateway Time-out",
                "Deadline exceeded while waiting for the model"],
    "schema": ['{"error": {"message": "Invalid value for messages", "type": "invalid_request_error"}}',
               '{"detail": "Not Found"}'],
}
# An error text takes the label of what it reports (docs/taxonomy.md): Envoy's reset before headers
# is a lost connection, whichever pool of wordings it was drawn from.
TEXT_LABELS = {"upstream connect error or disconnect/reset before headers. reset reason: overflow": "connection"}
TOOL_KINDS = ("timeout", "rate_limit", "empty", "malformed_json", "truncated", "key_rename", "wrong_value")
LLM_TYPES = ("error", "timeout", "empty", "truncate", "corrupt", "schema")
STRATEGIES = ("single", "persistent", "intermittent", "burst")
COMPOUNDS = ("compound_api_degradation", "compound_content_filter", "compound_max_tokens",
             "compound_proxy_html", "compound_stale_cache", "compound_stale_data",
             "compound_wrong_entity", "compound_slow_response")
HTTP_FAULTS = ("http_429", "http_500", "http_503", "http_connect_error", "http_read_timeout",
               "stream_cut", "stream_stall")


def all_configs(heldout: bool = False) -> list[str]:
    """The 65 LLM configurations plus the three tool-result conditions (and HTTP/stream when held out)."""
    names = [f"{p}_{t}_{s}" for p in ("llm", "tool") for t in LLM_TYPES for s in STRATEGIES]
    names += list(COMPOUNDS)
    names += [f"llm_{t}_pos_{p}" for t in ("error", "timeout", "schema") for p in ("early", "mid", "late")]
    names += ["tools_independent", "tools_bursty", "tools_persistent"]
    if heldout:
        names += list(HTTP_FAULTS)
    return names


def _tool_result(name: str, args: dict[str, Any], rng: random.Random) -> Any:
    if name == "get_weather":
        return {"city": args.get("city"), "temperature": round(rng.uniform(-5, 32), 1),
                "humidity": rng.randint(20, 95), "conditions": rng.choice(["sunny", "cloudy", "rain"]),
                "date": f"2026-03-0{rng.randint(1, 9)}"}
    if name == "search_flights":
        flights = [{"id": 4000 + rng.randint(0, 999), "price": round(rng.uniform(80, 900), 2),
                    "departure": f"2026-04-1{rng.randint(0, 9)}"} for _ in range(rng.randint(2, 4))]
        return {"flights": flights, "currency": "EUR", "count": len(flights)}
    if name == "get_stock_price":
        return {"symbol": args.get("symbol"), "price": round(rng.uniform(10, 500), 2),
                "volume": rng.randint(10_000, 900_000), "change_pct": round(rng.uniform(-3, 3), 2)}
    files = [f"f{rng.randint(0, 99)}.txt" for _ in range(rng.randint(2, 5))]
    return {"path": args.get("path"), "files": files, "total": len(files)}


def _args_for(name: str, rng: random.Random) -> dict[str, Any]:
    if name == "get_weather":
        return {"city": rng.choice(CITIES), "unit": "c"}
    if name == "search_flights":
        return {"origin": rng.choice(CITIES), "destination": rng.choice(CITIES), "date": "2026-04-12"}
    if name == "get_stock_price":
        return {"symbol": rng.choice(["AAPL", "NVDA", "SAP", "TM"])}
    return {"path": rng.choice(["/home/user", "/data/reports", "/tmp/cache"])}


def _canon(response: dict[str, Any]) -> str:
    """A response as the agent reads it (arguments parsed), to tell whether a fault changed it."""
    calls = []
    for n, a in response["calls"]:
        try:
            calls.append([n, json.loads(a) if isinstance(a, str) else a])
        except ValueError:
            calls.append([n, a])
    return json.dumps({**response, "calls": calls}, sort_keys=True, ensure_ascii=False)


def _valid_args(name: str, args: dict[str, Any]) -> bool:
    """Whether a simulated tool accepts the call: its required parameters present, enum values in
    their enum, other strings at least two characters long (a value cut to one letter is refused)."""
    schema = TOOLS.get(name)
    if not args or schema is None:
        return bool(args)
    props = schema["properties"]
    if not all(k in args for k in schema["required"]) or any(k not in props for k in args):
        return False
    for key, value in args.items():
        enum = props[key].get("enum")
        if enum is not None and value not in enum:
            return False
        if enum is None and isinstance(value, str) and len(value) < 2:
            return False
    return True


def _arg_text(a: Any) -> str:
    return a if isinstance(a, str) else json.dumps(a, ensure_ascii=False)


def _prose(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(12, 60))]
    if rng.random() < 0.7:
        words.insert(rng.randint(0, len(words)), rng.choice(CITIES))
    return " ".join(words).capitalize() + "."


# --- tool-result kinds (docs/design.md 3.3) -------------------------------------------------------------

def _halve(value: Any) -> Any:
    if isinstance(value, dict):
        keys = list(value)
        return {k: _halve(value[k]) for k in keys[:max(1, (len(keys) + 1) // 2)]}
    if isinstance(value, list):
        return [_halve(v) for v in value[:max(1, (len(value) + 1) // 2)]]
    return value


def _rename(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {mapping.setdefault(k, k + "_v2" if len(mapping) % 2 else k.upper()): _rename(v, mapping)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, mapping) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def _shift(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        return {k: _shift(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        out = [_shift(v, rng) for v in value]
        if len(out) > 1:
            out[0], out[1] = out[1], out[0]
        return out
    if isinstance(value, float):
        return round(value * (1 + rng.choice([-1, 1]) * rng.uniform(0.01, 0.1)), 2)
    if isinstance(value, int) and not isinstance(value, bool):
        return value + rng.choice([-1, 1]) * max(1, int(abs(value) * rng.uniform(0.01, 0.1)))
    return value


def apply_tool_kind(kind: str, result: Any, rng: random.Random, rename_map: dict[str, str]) -> Any:
    text = json.dumps(result)
    if kind == "timeout":
        return {"error": "timeout"}
    if kind == "rate_limit":
        return {"error": "rate_limit", "status": 429}
    if kind == "empty":
        return rng.choice([{}, ""])
    if kind == "malformed_json":
        return text[:max(1, int(len(text) * rng.uniform(0.3, 0.7)))]
    if kind == "truncated":
        return _halve(result)
    if kind == "key_rename":
        return _rename(result, rename_map)
    return _shift(result, rng)


# --- episode construction ----------------------------------------------------------------------

@dataclass
class _Fault:
    config: str
    family: str  # llm / tool / compound / positional / tools / http / stream
    fault_type: str
    strategy: str
    fired: int = 0


def _fault_for(config: str) -> _Fault | None:
    if config == "none":
        return None
    parts = config.split("_")
    if config.startswith("tools_"):
        return _Fault(config, "tools", "", parts[1])
    if config.startswith("compound_"):
        return _Fault(config, "compound", config, "single")
    if "_pos_" in config:
        return _Fault(config, "positional", parts[1], parts[3])
    if config.startswith(("http_", "stream_")):
        return _Fault(config, "http", config, "single")
    return _Fault(config, parts[0], parts[1], parts[2])


class _Episode:
    def __init__(self, task_id: str, seed: int, config: str, heldout: bool, n_llm: int):
        self.rng = random.Random(f"{task_id}:{seed}:{config}")
        self.task_id, self.seed, self.config, self.heldout = task_id, seed, config, heldout
        self.fault = _fault_for(config)
        self.n_llm = n_llm
        self.steps: list[StepRecord] = []
        self.t = 1_000_000_000
        self.messages = 1
        self.llm_calls = 0
        self.prev_response: dict[str, Any] | None = None
        self.rename_map: dict[str, str] = {}
        self.burst = self.rng.random() < 0.2
        self.persist_from = self.rng.randint(0, 6)
        self.tool_steps = 0
        self.any_changed = False
        self.trace_id = signals.digest(f"trace:{task_id}:{seed}:{config}") * 2

    def _span(self) -> str:
        return signals.digest(f"span:{self.trace_id}:{len(self.steps)}")

    def _add(self, kind: str, name: str, ms: float, attrs: dict[str, Any], status: str = "UNSET",
             error_type: str | None = None) -> None:
        start = self.t
        self.t += int(ms * 1e6) + 1000
        attrs = {A.STEP: len(self.steps), A.TASK_ID: self.task_id, **attrs}
        self.steps.append(StepRecord(len(self.steps), self._span(), kind, name, start, self.t, status,
                                     error_type, attrs))

    # LLM side ---------------------------------------------------------------------------------
    def _fires(self, has_calls: bool) -> bool:
        f = self.fault
        if f is None or f.family not in ("llm", "tool", "compound", "positional", "http"):
            return False
        call = self.llm_calls  # 1-based count of intercepted calls
        if f.family == "positional":
            return call == {"early": 1, "mid": 2, "late": 3}[f.strategy]
        if f.family == "http":
            return f.fired == 0 and call == 2
        if f.family == "compound":
            if f.config == "compound_stale_cache":
                return call == 2
            if f.config in ("compound_stale_data", "compound_wrong_entity"):
                return has_calls and f.fired == 0
            if f.config in ("compound_content_filter", "compound_slow_response"):
                return f.fired == 0 and call >= 2
            return f.fired == 0 and not has_calls
        if (f.family == "llm") == has_calls:  # field guard
            return False
        if f.strategy == "single":
            return f.fired == 0
        if f.strategy == "burst":
            return f.fired < 3
        if f.strategy == "intermittent":
            return self.rng.random() < 0.3
        return True

    def _text(self, kind: str) -> str:
        pool = HELDOUT_TEXT if self.heldout else SEEN_TEXT
        return self.rng.choice(pool[kind])

    def llm_step(self, final: bool) -> list[tuple[str, dict[str, Any]]]:
        self.llm_calls += 1
        rng = self.rng
        calls = [] if final else [(n, _args_for(n, rng)) for n in [rng.choice(list(TOOLS))]]
        content: str | None = _prose(rng) if (final or rng.random() < 0.3) else None
        finish = "tool_calls" if calls else "stop"
        ms = rng.lognormvariate(0, 0.35) * 900
        rid = f"chatcmpl-{signals.digest(f'{self.trace_id}:{self.llm_calls}')}"
        response = {"id": rid, "content": content, "calls": calls, "finish": finish}
        gt: dict[str, Any] = {A.FAULT_INJECTED: False}
        status, error_type, http_status, stream_attrs = "UNSET", None, None, {}
        f = self.fault
        if self._fires(bool(calls)):
            assert f is not None
            f.fired += 1
            before = _canon(response)
            target = "tool_calls" if f.family == "tool" else "content"
            ftype = f.fault_type
            if f.family in ("llm", "positional"):
                response = self._llm_content_fault(ftype, response)
                ftype = TEXT_LABELS.get(response.get("content") or "", ftype)
            elif f.family == "tool":
                response = self._llm_tool_fault(ftype, response)
            elif f.family == "compound":
                response, ftype, target, ms = self._compound(f.config, response, ms)
            else:
                ftype, target, http_status, error_type, stream_attrs, ms = self._http(f.config, response, ms)
                if http_status is not None or error_type is not None:
                    status = "ERROR"
            changed = _canon(response) != before or ftype == "latency" or target in ("http", "stream")
            self.any_changed |= changed
            gt = {A.FAULT_INJECTED: True, A.FAULT_TYPE: ftype, A.FAULT_TARGET: target,
                  A.FAULT_EXPERIMENT: f.config, A.FAULT_STRATEGY: f.strategy, A.FAULT_CHANGED: changed,
                  A.ORIGINAL_FINISH_REASONS: [finish]}
        attrs: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_CHAT, A.GEN_AI_REQUEST_MODEL: "sim-agent",
                                 A.GEN_AI_PROVIDER_NAME: A.PROVIDER_OPENAI, A.SIMULATED: True,
                                 A.REQUEST_MESSAGE_COUNT: self.messages, A.REQUEST_TOOL_COUNT: len(TOOLS),
                                 A.REQUEST_DIGEST: signals.digest(f"{self.trace_id}:req:{self.messages}"),
                                 A.GEN_AI_REQUEST_STREAM: bool(stream_attrs)}
        if http_status is None and error_type is None:
            tool_calls = [{"id": f"call_{i}", "type": "function",
                           "function": {"name": n, "arguments": _arg_text(a)}}
                          for i, (n, a) in enumerate(response["calls"])]
            attrs.update({A.GEN_AI_RESPONSE_ID: response["id"], A.GEN_AI_RESPONSE_MODEL: "sim-agent",
                          A.GEN_AI_RESPONSE_FINISH_REASONS: [f for f in [response["finish"]] if f],
                          A.GEN_AI_USAGE_INPUT_TOKENS: 200 + 40 * self.messages,
                          A.GEN_AI_USAGE_OUTPUT_TOKENS: (len(response["content"] or "") // 4
                                                         + 12 * len(tool_calls))})
            attrs.update(signals.content_signals(response["content"]))
            attrs.update(signals.tool_call_signals(tool_calls, REQUEST_TOOLS))
            # The user's request named the entities the agent means to look up (the calls as the
            # model meant them, before any fault), so argument grounding has a conversation.
            asked = " ".join(str(v) for _, a in calls for v in a.values())
            attrs.update(signals.argument_grounding(tool_calls, [{"role": "user", "content": f"Look up {asked}."}]))
            attrs[A.RESPONSE_DIGEST] = signals.canonical_json_digest(
                {"text": response["content"] or "",
                 "tools": [[n, _arg_text(a)] for n, a in response["calls"]]})
            attrs.update(stream_attrs)
            attrs[A.RESPONSE_STATUS_CODE] = 200
        else:
            if http_status is not None:
                attrs[A.RESPONSE_STATUS_CODE] = http_status
                body = self._provider_error_body(http_status)
                attrs[A.RESPONSE_ERROR_MARKER] = signals.error_marker(body) or "provider_json"
            attrs[A.ERROR_TYPE] = error_type or str(http_status)
            error_type = attrs[A.ERROR_TYPE]
        attrs.update(gt)
        self._add("llm", "chat sim-agent", ms, attrs, status, error_type)
        self.messages += 1
        self.prev_response = response
        parsed = []
        for n, a in response["calls"]:
            try:
                parsed.append((n, json.loads(a) if isinstance(a, str) else a))
            except ValueError:
                parsed.append((n, {}))
        return parsed

    def _provider_error_body(self, status: int) -> str:
        if status == 429:
            return json.dumps({"error": {"message": "Rate limit reached for requests", "type": "requests",
                                         "code": "rate_limit_exceeded"}})
        return json.dumps({"error": {"message": "The server had an error while processing your request.",
                                     "type": "server_error"}})

    def _llm_content_fault(self, ftype: str, r: dict[str, Any]) -> dict[str, Any]:
        r = copy.deepcopy(r)
        text = r["content"] or ""
        if ftype in ("error", "timeout", "schema"):
            r["content"] = self._text(ftype)
        elif ftype == "empty":
            r["content"] = ""
        elif ftype == "truncate":
            ratio = self.rng.uniform(0.1, 0.7) if self.heldout else 0.3
            r["content"], r["finish"] = text[:int(len(text) * ratio)], "length"
        elif ftype == "corrupt":
            if self.heldout and self.rng.random() < 0.5:
                chars = list(text)
                for i in self.rng.sample(range(len(chars)), k=max(1, len(chars) // 8)) if chars else []:
                    chars[i] = self.rng.choice(["\ufffd", "\u2603", "\x07"])
                r["content"] = "".join(chars)
            else:
                enc = "cp1252" if self.heldout else "latin-1"
                r["content"] = text.encode("utf-8").decode(enc, errors="replace")
        return r

    def _llm_tool_fault(self, ftype: str, r: dict[str, Any]) -> dict[str, Any]:
        r = copy.deepcopy(r)
        calls = [(n, json.dumps(a)) for n, a in r["calls"]]
        name, args = calls[0]
        if ftype == "error":
            calls[0] = (name, "{}")
        elif ftype in ("timeout", "empty"):
            calls = []
            r["content"] = "[TIMEOUT] Connection dropped. The server did not respond." if ftype == "timeout" \
                else None
        elif ftype == "truncate":
            ratio = self.rng.uniform(0.1, 0.6) if self.heldout else 0.3
            a = json.loads(args)
            calls[0] = (name, json.dumps({k: v[:max(0, int(len(v) * ratio))] if isinstance(v, str) else v
                                          for k, v in a.items()}))
        elif ftype == "corrupt":
            a = json.loads(args)

            def garble(s: str) -> str:
                out = list(s)
                for i in range(len(out)):
                    if self.rng.random() < 0.2:
                        out[i] = chr(self.rng.randint(0x2600, 0x26FF))
                return "".join(out)
            calls[0] = (name, json.dumps({k: garble(v) if isinstance(v, str) else v for k, v in a.items()},
                                         ensure_ascii=False))
        elif ftype == "schema":
            calls[0] = (name, '{"wrong_param": "unexpected_value"}')
        r["calls"] = calls
        return r

    def _compound(self, config: str, r: dict[str, Any], ms: float) -> tuple[dict[str, Any], str, str, float]:
        r = copy.deepcopy(r)
        if config == "compound_api_degradation":
            r["content"] = ("[SERVICE UNAVAILABLE] HTTP 503: The server is temporarily unable to handle "
                            "the request.")
            return r, "error", "content", ms + 3000
        if config == "compound_content_filter":
            r.update(content="[CONTENT FILTERED] This response has been blocked.", calls=[],
                     finish="content_filter")
            return r, "content_filter", "content", ms
        if config == "compound_max_tokens":
            text = r["content"] or ""
            r.update(content=text[:len(text) // 2], finish="length")
            return r, "truncate", "content", ms
        if config == "compound_proxy_html":
            r["content"] = ("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
                            "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.24.0"
                            "</center></body></html>")
            return r, "error", "content", ms
        if config == "compound_stale_cache":
            return (copy.deepcopy(self.prev_response) if self.prev_response else r), "stale", "content", ms
        if config in ("compound_stale_data", "compound_wrong_entity"):
            city = "Pyongyang" if config == "compound_stale_data" else "Springfield"
            name, _ = r["calls"][0]
            r["calls"][0] = (name, {"city": city})
            return r, "wrong_value", "tool_calls", ms
        return r, "latency", "http", ms + 5000

    def _http(self, config: str, r: dict[str, Any], ms: float
              ) -> tuple[str, str, int | None, str | None, dict[str, Any], float]:
        if config == "http_429":
            return "rate_limit", "http", 429, None, {}, 40.0
        if config in ("http_500", "http_503"):
            return "http_error", "http", int(config[-3:]), None, {}, 40.0
        if config == "http_connect_error":
            return "connection", "http", None, "ConnectError", {}, 5.0
        if config == "http_read_timeout":
            return "timeout", "http", None, "ReadTimeout", {}, 30000.0
        if config == "stream_cut":
            r["finish"] = None
            return "stream_cut", "stream", None, None, {A.RESPONSE_STREAM_DONE: False,
                                                        A.RESPONSE_STREAM_CHUNKS: 3}, ms
        return "latency", "stream", None, None, {A.RESPONSE_STREAM_DONE: True, A.RESPONSE_STREAM_CHUNKS: 20,
                                                 A.RESPONSE_MAX_CHUNK_GAP_MS: 5000.0}, ms + 5000

    # Tool side --------------------------------------------------------------------------------
    def _tool_kind(self) -> str | None:
        f = self.fault
        if f is None or f.family != "tools":
            return None
        rng = self.rng
        if f.strategy == "persistent":
            return "key_rename" if self.tool_steps >= self.persist_from else None
        if f.strategy == "independent":
            return rng.choice(TOOL_KINDS) if rng.random() < 0.16 else None
        self.burst = rng.random() < (1 - 1 / 5) if self.burst else rng.random() < 1 / 20
        return rng.choice(TOOL_KINDS) if self.burst and rng.random() < 0.8 else None

    def tool_step(self, name: str, args: dict[str, Any], *, retry: bool = False) -> bool:
        """One tool call; True when the agent saw trouble. A transient error of the environment
        itself (5% of calls) is retried at once with the same arguments and the retry answers, so
        it is absorbed, as docs/taxonomy.md defines a benign error: never a root cause."""
        rng = self.rng
        env_error = False
        if not _valid_args(name, args):
            result: Any = {"error": f"invalid arguments for {name}: missing or unknown value"}
        elif not retry and rng.random() < 0.05:
            result = {"error": f"{name}: backend temporarily unavailable, try again"}
            env_error = True
        else:
            result = _tool_result(name, args, rng)
        kind = self._tool_kind()
        self.tool_steps += 1
        gt: dict[str, Any] = {A.FAULT_INJECTED: False}
        seen = result
        if kind is not None:
            seen = apply_tool_kind(kind, result, rng, self.rename_map)
            changed = json.dumps(seen, sort_keys=True) != json.dumps(result, sort_keys=True)
            self.any_changed |= changed
            gt = {A.FAULT_INJECTED: True, A.FAULT_TYPE: kind, A.FAULT_TARGET: "tool_result",
                  A.FAULT_EXPERIMENT: self.config,
                  A.FAULT_STRATEGY: self.fault.strategy if self.fault else "",
                  A.FAULT_CHANGED: changed}
        attrs = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: name,
                 A.TOOL_ARGS_DIGEST: signals.canonical_json_digest(args), A.SIMULATED: True}
        attrs.update(signals.tool_result_signals(seen))
        attrs[A.TOOL_RESULT_ECHO_MISMATCH] = signals.echo_mismatches(args, seen)
        attrs.update(gt)
        self._add("tool", f"execute_tool {name}", rng.uniform(1, 30), attrs)
        self.messages += 1
        if env_error and kind is None:
            self.messages += 1  # the model's turn that asks again
            return self.tool_step(name, args, retry=True)
        return bool(attrs.get(A.TOOL_RESULT_IS_ERROR)) or kind is not None


def make_episode(task_id: str, seed: int, config: str, *, heldout: bool = False,
                 n_llm: int | None = None) -> EpisodeTrace:
    """One simulated episode of ``config`` (a catalog-style name, ``tools_<condition>`` or 'none')."""
    ep = _Episode(task_id, seed, config, heldout, n_llm or random.Random(f"{task_id}:{seed}").randint(4, 12))
    trouble = 0
    for i in range(ep.n_llm):
        calls = ep.llm_step(final=i == ep.n_llm - 1)
        for name, args in calls:
            if ep.tool_step(name, args):
                trouble += 1
                if ep.rng.random() < 0.25:  # retry the identical call
                    ep.tool_step(name, args)
    p_success = 0.6 if not ep.any_changed else max(0.1, 0.45 - 0.1 * trouble)
    success = ep.rng.random() < p_success
    return EpisodeTrace(trace_id=ep.trace_id, task_id=task_id, steps=tuple(ep.steps), success=success,
                        condition=config, seed=seed,
                        attributes={A.EPISODE_SUCCESS: success, A.SIMULATED: True, A.CONDITION: config})


def make_corpus(n_tasks: int = 20, seeds: int = 2, *, heldout: bool = False, include_clean: bool = True,
                long: bool = False, configs: list[str] | None = None) -> list[EpisodeTrace]:
    """Every config x task x seed; ``long`` gives 15-30 LLM calls per episode."""
    configs = configs or all_configs(heldout)
    out = []
    for config in (["none"] if include_clean else []) + configs:
        for t in range(n_tasks):
            for s in range(seeds):
                n = random.Random(f"len:{t}:{s}:{config}").randint(15, 30) if long else None
                out.append(make_episode(f"task-{t:03d}", s, config, heldout=heldout, n_llm=n))
    return out


# --- hand-built steps ----------------------------------------------------------------------------

def llm_record(step: int, *, content: str | None = "Here is the answer.",
               tool_calls: Sequence[tuple[str, Any]] = (), finish: str | None = None, ms: float = 800.0,
               start_ns: int | None = None,
               response_id: str | None = None, status_code: int | None = 200, error_type: str | None = None,
               request_tools: list[dict[str, Any]] | None = None, fault: dict[str, Any] | None = None,
               extra: dict[str, Any] | None = None) -> StepRecord:
    """An LLM step with the attributes the transport records for this reply (SIMULATED)."""
    start = start_ns if start_ns is not None else 1_000_000_000 + step * 2_000_000_000
    attrs: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_CHAT, A.GEN_AI_REQUEST_MODEL: "sim-agent",
                             A.STEP: step, A.REQUEST_DIGEST: signals.digest(f"req{step}"),
                             A.FAULT_INJECTED: False}
    status = "UNSET"
    if error_type is not None or (status_code is not None and status_code >= 400):
        status = "ERROR"
        if status_code is not None:
            attrs[A.RESPONSE_STATUS_CODE] = status_code
        attrs[A.ERROR_TYPE] = error_type or str(status_code)
    else:
        calls = [{"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": _arg_text(a)}}
                 for i, (n, a) in enumerate(tool_calls)]
        attrs.update(signals.content_signals(content))
        declared = REQUEST_TOOLS if request_tools is None else request_tools
        attrs.update(signals.tool_call_signals(calls, declared))
        attrs[A.GEN_AI_RESPONSE_FINISH_REASONS] = [finish or ("tool_calls" if calls else "stop")]
        attrs[A.GEN_AI_RESPONSE_ID] = response_id or f"chatcmpl-{step}"
        attrs[A.RESPONSE_DIGEST] = signals.canonical_json_digest(
            {"text": content or "", "tools": [[n, _arg_text(a)] for n, a in tool_calls]})
        if status_code is not None:
            attrs[A.RESPONSE_STATUS_CODE] = status_code
    attrs.update(fault or {})
    attrs.update(extra or {})
    return StepRecord(step, f"span{step:04d}", "llm", "chat sim-agent", start, start + int(ms * 1e6), status,
                      attrs.get(A.ERROR_TYPE), attrs)


def tool_record(step: int, name: str, result: Any, *, args: dict[str, Any] | None = None, ms: float = 5.0,
                start_ns: int | None = None, fault: dict[str, Any] | None = None) -> StepRecord:
    """A tool step with the attributes the tool injector records for this result (SIMULATED)."""
    start = start_ns if start_ns is not None else 1_000_000_000 + step * 2_000_000_000
    attrs: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: name,
                             A.STEP: step, A.FAULT_INJECTED: False,
                             A.TOOL_ARGS_DIGEST: signals.canonical_json_digest(args or {})}
    attrs.update(signals.tool_result_signals(result))
    if args is not None:
        attrs[A.TOOL_RESULT_ECHO_MISMATCH] = signals.echo_mismatches(args, result)
    attrs.update(fault or {})
    return StepRecord(step, f"span{step:04d}", "tool", f"execute_tool {name}", start, start + int(ms * 1e6),
                      "UNSET", None, attrs)


def episode_of(steps: list[StepRecord], *, success: bool = False, task_id: str = "t1",
               trace_id: str = "trace-1") -> EpisodeTrace:
    return EpisodeTrace(trace_id=trace_id, task_id=task_id, steps=tuple(steps), success=success,
                        attributes={A.SIMULATED: True})


def fault_attrs(fault_type: str, target: str, *, changed: bool = True) -> dict[str, Any]:
    """Ground-truth attributes as the injectors write them."""
    return {A.FAULT_INJECTED: True, A.FAULT_TYPE: fault_type, A.FAULT_TARGET: target,
            A.FAULT_CHANGED: changed, A.FAULT_EXPERIMENT: "hand-built"}
