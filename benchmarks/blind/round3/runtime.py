"""One episode's moving parts: the scripted model's replies, the faults, the tools, the ledger.

The loopback server hands every chat request of the episode to :meth:`Runtime.on_request`, and the
wrapped tools call :meth:`Runtime.tool`. Both count steps in the order they start (the store's
numbering: LLM request attempts and tool calls, from 0), so the ledger says, for every step, what
it was and which failure form, if any, this code put into it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks.blind.round3.forms_llm import LLM_FORMS, LlmForm
from benchmarks.blind.round3.forms_tool import TOOL_FORMS, ToolForm
from benchmarks.blind.round3.policy import Call, Play, Say, decide
from benchmarks.blind.round3.server import Reply
from benchmarks.blind.round3.world import World, mutate

LLM_BY_ID = {f.id: f for f in LLM_FORMS}
TOOL_BY_ID = {f.id: f for f in TOOL_FORMS}
MODEL = "shop-agent-1"
CREATED = 1772445600
SLOW_S = 30.0       # a slow reply: twice the agent's per-call budget (runner.CALL_BUDGET_S)
HEARTBEAT_S = 4.0   # the slow reply keeps the connection alive (under the read timeout)
SLOW_OK_S = 0.8     # a slow reply the agent waits out
STALL_S = 15.0      # longer than the client's read timeout (runner.READ_TIMEOUT_S)


@dataclass(frozen=True)
class Injection:
    """Put form ``form`` into the ``nth`` matching call and the ``times - 1`` matching calls after it.

    A tool injection matches calls of tool ``target``; an LLM injection matches requests whose
    scripted answer would be ``target`` (a tool name, or ``final`` for the closing reply).
    ``took_effect``: the tool really ran although the agent is told it failed.
    """

    form: str
    side: str
    target: str
    nth: int = 0
    times: int = 1
    role: str = "root"          # root | second | absorbed | benign
    took_effect: bool = False
    variant: str = ""           # benign variants of a form (e.g. a shorter delay)


@dataclass
class LedgerEntry:
    step: int
    kind: str                   # llm | tool
    name: str                   # tool name, or the scripted answer's target for an LLM request
    form: str | None = None
    role: str | None = None


def _h(*parts: Any) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def _fill(text: str, args: dict[str, Any], req: str) -> str:
    out = text.replace("{req}", req)
    for key, name in (("order_id", "order_id"), ("sku", "sku"), ("email", "to")):
        out = out.replace("{" + key + "}", str(args.get(name, args.get(key, "")) or "unknown"))
    return out


@dataclass
class Runtime:
    task_id: str
    play: Play
    world: World
    injections: list[Injection]
    seed: int
    expected: dict[str, Any] = field(default_factory=dict)
    ledger: list[LedgerEntry] = field(default_factory=list)
    outcome: tuple[bool, str, str | None] | None = None
    _seen: dict[tuple[str, str], int] = field(default_factory=dict)
    _last: tuple[dict[str, Any], str, str] | None = None
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    # ---- fault schedule ------------------------------------------------------------------------
    def _match(self, side: str, target: str) -> Injection | None:
        key = (side, target)
        n = self._seen.get(key, 0)
        self._seen[key] = n + 1
        for inj in self.injections:
            if inj.side == side and inj.target == target and inj.nth <= n < inj.nth + inj.times:
                return inj
        return None

    def _step(self, kind: str, name: str) -> LedgerEntry:
        entry = LedgerEntry(len(self.ledger), kind, name)
        self.ledger.append(entry)
        return entry

    # ---- tools ---------------------------------------------------------------------------------
    def tool(self, name: str, **kwargs: Any) -> str:
        entry = self._step("tool", name)
        inj = self._match("tool", name)
        op = getattr(self.world, name)
        if inj is None:
            return json.dumps(op(**kwargs), ensure_ascii=False)
        form: ToolForm = TOOL_BY_ID[inj.form]
        if form.kind in ("error", "literal"):
            if inj.took_effect:
                op(**kwargs)
            entry.form, entry.role = form.id, inj.role
            return _fill(form.text, kwargs, _h(self.task_id, entry.step)[:16])
        result = op(**kwargs)
        if "error" in result:
            return json.dumps(result, ensure_ascii=False)
        entry.form, entry.role = form.id, inj.role
        if inj.variant == "drop_optional":
            entry.form = "optional_field_missing"
            result.pop("phone", None)
            result.pop("as_of", None)
            return json.dumps(result, ensure_ascii=False)
        return mutate(form.text, result, self.world, name, self.rng)

    # ---- the model API -------------------------------------------------------------------------
    def _message(self, action: Call | Say, step: int) -> tuple[dict[str, Any], str]:
        if isinstance(action, Say):
            return {"role": "assistant", "content": action.text}, "stop"
        args = action.raw if action.raw is not None else json.dumps(action.args, ensure_ascii=False)
        call = {"id": "call_" + _h(self.task_id, step, "call")[:24], "type": "function",
                "function": {"name": action.name, "arguments": args}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"

    async def on_request(self, body: dict[str, Any]) -> Reply:
        entry = self._step("llm", "?")
        action = decide(self.play, body.get("messages") or [])
        entry.name = action.name if isinstance(action, Call) else "final"
        stream = bool(body.get("stream"))
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        inj = self._match("llm", entry.name)
        msg, finish = self._message(action, entry.step)
        cid = "chatcmpl-" + _h(self.task_id, entry.step, "id")[:24]
        if inj is None:
            self._last = (msg, finish, cid)
            return render(msg, finish, cid, stream, usage)
        form = LLM_BY_ID[inj.form]
        entry.form, entry.role = form.id, inj.role
        return self._apply(form, inj, msg, finish, cid, stream, usage, entry.step)

    def _apply(self, form: LlmForm, inj: Injection, msg: dict[str, Any], finish: str, cid: str,
               stream: bool, usage: bool, step: int) -> Reply:
        p, kind = form.params, form.kind
        req = _h(self.task_id, step, "req")[:20]
        if kind == "http":
            body = p["body"]
            body = body if isinstance(body, str) else json.dumps(body)
            return Reply(status=p["status"], body=body.replace("{req}", req), content_type=p["ctype"],
                         headers={"x-request-id": "req_" + req, **p["headers"]})
        if kind in ("drop", "reset"):
            return Reply(kind=kind)
        if kind == "stall":
            return Reply(kind="drop", delay=STALL_S)
        if kind == "body":
            return Reply(body=json.dumps(p["body"]).replace("{req}", req))
        if kind == "slow":
            delay = SLOW_OK_S if inj.variant == "ok" else SLOW_S
            reply = render(msg, finish, cid, stream, usage)
            if p.get("where") == "gap" and reply.kind == "sse":
                reply.gaps = {len(reply.events) // 2: delay}
            else:
                reply.delay = delay
            reply.heartbeat = HEARTBEAT_S
            return reply
        if kind == "stale":
            if self._last is None:
                raise RuntimeError("stale form before any reply")
            old, old_finish, old_id = self._last
            return render(old, old_finish, old_id, stream, usage)
        m = copy.deepcopy(msg)
        extra: dict[str, Any] = {}
        if kind == "content":
            m = {"role": "assistant", "content": p["text"].replace("{req}", req)}
            finish = "stop"
        elif kind == "empty":
            m = {"role": "assistant", "content": p.get("content", "")}
            finish = "stop"
        elif kind == "filter":
            m = {"role": "assistant", "content": None}
            finish = "content_filter"
            if "results" in p:
                extra["content_filter_results"] = p["results"]
        elif kind == "length":
            text = m.get("content") or ""
            m = {"role": "assistant", "content": text[: max(1, int(len(text) * p["keep"]))]}
            finish = "length"
        elif kind == "mojibake":
            m["content"] = (m.get("content") or "").encode("utf-8").decode(p["codec"], errors="replace")
        elif kind == "replacement":
            m["content"] = self._garble(m.get("content") or "", symbols=bool(p.get("symbols")))
        elif kind == "args":
            self._args(m, p["how"])
        elif kind == "sse_error":
            events = render(m, finish, cid, True, usage).events
            event = json.dumps(p["event"]).replace("{req}", req)
            return Reply(kind="sse", events=events[:2] + [f"data: {event}\n\n"])
        if kind in ("cut", "stalled"):
            events = render(m, finish, cid, True, usage).events
            content_events = max(2, len(events) - 3)
            keep = max(1, int(content_events * 0.4))
            if kind == "stalled":
                return Reply(kind="sse", events=events, gaps={keep: STALL_S}, end="abort")
            out = events[:keep]
            if p.get("mid_event"):
                out.append(events[keep][: len(events[keep]) // 2])
                return Reply(kind="sse", events=out, end="abort")
            if p.get("done"):
                out.append("data: [DONE]\n\n")
            return Reply(kind="sse", events=out, end="abort" if p.get("abort") else "clean")
        return render(m, finish, cid, stream, usage, extra)

    def _garble(self, text: str, *, symbols: bool) -> str:
        chars = list(text)
        digits = [i for i, c in enumerate(chars) if c.isalnum()]
        for i in self.rng.sample(digits, max(1, len(digits) // 6)) if digits else []:
            chars[i] = chr(self.rng.randrange(0x2600, 0x2700)) if symbols else "\ufffd"
        return "".join(chars)

    def _args(self, m: dict[str, Any], how: str) -> None:
        fn = m["tool_calls"][0]["function"]
        args = json.loads(fn["arguments"])
        strings = [k for k, v in args.items() if isinstance(v, str)]
        longest = max(strings, key=lambda k: len(args[k])) if strings else None
        if how == "empty":
            args = {}
        elif how == "undeclared":
            args = {"query": " ".join(str(v) for v in args.values()), "options": {"verbose": True}}
        elif how == "cut" and longest:
            args[longest] = args[longest][: max(1, int(len(args[longest]) * 0.3))]
        elif how == "symbols" and longest:
            args[longest] = self._garble(args[longest], symbols=True)
        elif how == "amount":
            key = "amount_cents"
            args[key] = int(round(args[key] * self.rng.choice([1.05, 1.07, 1.09, 0.93])))
        elif how == "order":
            current = args["order_id"]
            others = sorted(o for o in self.world.orders if o != current)
            args["order_id"] = min(others, key=lambda o: abs(int(o.split("-")[1]) - int(current.split("-")[1])))
        fn["arguments"] = json.dumps(args, ensure_ascii=False)


def _usage(msg: dict[str, Any]) -> dict[str, int]:
    out = len(json.dumps(msg)) // 4 + 1
    return {"prompt_tokens": 900, "completion_tokens": out, "total_tokens": 900 + out}


def render(msg: dict[str, Any], finish: str, cid: str, stream: bool, usage: bool,
           extra: dict[str, Any] | None = None) -> Reply:
    """A chat completion as JSON, or as the chunked event stream of a streamed one."""
    if not stream:
        choice = {"index": 0, "message": msg, "logprobs": None, "finish_reason": finish, **(extra or {})}
        return Reply(body={"id": cid, "object": "chat.completion", "created": CREATED, "model": MODEL,
                           "choices": [choice], "usage": _usage(msg), "system_fingerprint": "fp_shop1"})
    base = {"id": cid, "object": "chat.completion.chunk", "created": CREATED, "model": MODEL,
            "system_fingerprint": "fp_shop1"}

    def ev(delta: dict[str, Any], fin: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": fin}
        if fin and extra:
            choice.update(extra)
        return "data: " + json.dumps({**base, "choices": [choice]}, ensure_ascii=False) + "\n\n"

    events = [ev({"role": "assistant", "content": ""})]
    content = msg.get("content") or ""
    events += [ev({"content": content[i:i + 24]}) for i in range(0, len(content), 24)]
    for i, tc in enumerate(msg.get("tool_calls") or []):
        events.append(ev({"tool_calls": [{"index": i, "id": tc["id"], "type": "function",
                                          "function": {"name": tc["function"]["name"], "arguments": ""}}]}))
        args = tc["function"]["arguments"]
        events += [ev({"tool_calls": [{"index": i, "function": {"arguments": args[j:j + 32]}}]})
                   for j in range(0, len(args), 32)]
    events.append(ev({}, finish))
    if usage:
        events.append("data: " + json.dumps({**base, "choices": [], "usage": _usage(msg)}) + "\n\n")
    events.append("data: [DONE]\n\n")
    return Reply(kind="sse", events=events)
