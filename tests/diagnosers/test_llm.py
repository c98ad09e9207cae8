"""LLM-based diagnosis against a loopback OpenAI-compatible server (the openai SDK as client)."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from benchmarks.corpora.synthetic import episode_of, llm_record, tool_record
from diagnosers.llm import AnswerError, LLMDiagnoser, parse_answer
from diagnosers.prompt import render_episode
from diagnosers.view import EpisodeView

WEATHER = ("get_weather", {"city": "Oslo", "unit": "c"})


class ScriptedEndpoint:
    """A loopback chat-completions endpoint whose 'model' is a few lines of Python (simulated).

    First attempts get prose (an invalid answer) when ``malformed_first``; answers point at the
    first step line showing an error form or a length cut.
    """

    def __init__(self, malformed_first: bool = True, always_bad: bool = False):
        self.malformed_first = malformed_first
        self.always_bad = always_bad
        self.requests: list[dict[str, Any]] = []
        self.inflight = 0
        self.max_inflight = 0
        self.lock = threading.Lock()

    def answer(self, req: dict[str, Any]) -> str:
        msgs = req["messages"]
        if self.always_bad or (self.malformed_first and len(msgs) == 2):
            return "I think the agent had a bad day."
        trace = msgs[1]["content"]
        for line in trace.splitlines():
            m = re.match(r"s(\d+) ", line)
            if m and ("reply_error=" in line or "finish=length" in line):
                ftype = "truncate" if "finish=length" in line else "error"
                answer = {"fault_type": ftype, "target": "content", "step": int(m[1]), "confidence": 0.7,
                          "evidence": f"line: {line[:40]}"}
                return "```json\n" + json.dumps(answer) + "\n```"
        return json.dumps({"fault_type": "none_found", "target": None, "step": None, "confidence": 0.2,
                           "evidence": "nothing stands out"})

    def handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with endpoint.lock:
                    endpoint.requests.append(body)
                    endpoint.inflight += 1
                    endpoint.max_inflight = max(endpoint.max_inflight, endpoint.inflight)
                time.sleep(0.02)  # let concurrent requests overlap so the bound is exercised
                content = endpoint.answer(body)
                with endpoint.lock:
                    endpoint.inflight -= 1
                out = json.dumps({"id": "chatcmpl-x", "object": "chat.completion", "created": 0,
                                  "model": body["model"],
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": content}}],
                                  "usage": {"prompt_tokens": 100, "completion_tokens": 20,
                                            "total_tokens": 120}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
        return Handler


@pytest.fixture()
def endpoint() -> Iterator[tuple[ScriptedEndpoint, str]]:
    ep = ScriptedEndpoint()
    server = ThreadingHTTPServer(("127.0.0.1", 0), ep.handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield ep, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def episodes() -> list:
    out = []
    for i in range(4):
        steps = [llm_record(0, content=None, tool_calls=[WEATHER]), tool_record(1, "get_weather", {"t": 1})]
        steps.append(llm_record(2, content="[API ERROR] HTTP 500") if i % 2 == 0
                     else llm_record(2, content="The forecast for", finish="length"))
        out.append(episode_of(steps, trace_id=f"tr{i}", task_id=f"task{i}"))
    return out


def test_retry_on_malformed_answer_cache_and_cost(endpoint: tuple[ScriptedEndpoint, str],
                                                  tmp_path: Path) -> None:
    server, url = endpoint
    cache = str(tmp_path / "cache.duckdb")
    d = LLMDiagnoser(url, "sim-diagnoser", cache_path=cache, concurrency=2)
    eps = episodes()
    out = d.diagnose_many([e.blind() for e in eps])
    assert [(x.fault_type, x.step) for x in out] == [("error", 2), ("truncate", 2)] * 2
    assert all(x.method == "llm" and x.span_id == "span0002" for x in out)
    assert d.usage.calls == 8 and d.usage.retries == 4 and d.usage.failures == 0
    assert (d.usage.input_tokens, d.usage.output_tokens) == (800, 160)
    assert "800 input + 160 output" in d.usage.line("sim-diagnoser")
    assert 1 <= server.max_inflight <= 2
    assert all(r["model"] == "sim-diagnoser" and r["temperature"] == 0 for r in server.requests)
    assert "That answer was invalid" in server.requests[-1]["messages"][-1]["content"]
    again = LLMDiagnoser(url, "sim-diagnoser", cache_path=cache)
    assert again.diagnose_many([e.blind() for e in eps]) == out
    assert again.usage.calls == 0 and again.usage.cached == 4
    other_model = LLMDiagnoser(url, "another-model", cache_path=cache)
    other_model.diagnose_many([eps[0].blind()])
    assert other_model.usage.calls == 2  # the cache is keyed by model too


def test_two_invalid_answers_give_none_found(endpoint: tuple[ScriptedEndpoint, str]) -> None:
    server, url = endpoint
    server.always_bad = True
    d = LLMDiagnoser(url, "sim-diagnoser")
    (x,) = d.diagnose_many([episodes()[0].blind()])
    assert x.fault_type == "none_found" and "no valid answer" in x.evidence
    assert d.usage.calls == 2 and d.usage.failures == 1


def test_unreachable_endpoint_is_a_failed_diagnosis_not_a_crash() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    d = LLMDiagnoser(f"http://127.0.0.1:{port}/v1", "m", timeout_s=2.0)
    (x,) = d.diagnose_many([episodes()[0].blind()])
    assert x.fault_type == "none_found" and "LLM call failed" in x.evidence


@pytest.mark.parametrize("text,reason", [
    ("", "empty"), ("no json here", "no JSON"), ('{"fault_type": "gremlins", "step": 1}', "fault_type"),
    ('{"fault_type": "error", "step": 99}', "step"), ('{"fault_type": "error", "step": 1, "confidence": 3}',
                                                      "confidence"),
    ('{"fault_type": "error", "step": null}', "needs the step"), ('{"fault_type": "error", "step": 1, '
                                                                  '"target": "moon"}', "target"),
])
def test_answer_validation(text: str, reason: str) -> None:
    with pytest.raises(AnswerError, match=reason):
        parse_answer(text, {0, 1, 2})


def test_answer_validation_accepts_fenced_and_step_strings() -> None:
    a = parse_answer('```json\n{"fault_type": "key_rename", "target": "tool_result", "step": "s2", '
                     '"confidence": 1, "evidence": "keys\\n changed"}\n```', {0, 1, 2})
    assert a == {"fault_type": "key_rename", "target": "tool_result", "step": 2, "confidence": 1.0,
                 "evidence": "keys changed"}


def test_rendering_fits_the_budget_and_keeps_anomalies() -> None:
    steps = []
    for i in range(0, 300, 2):
        steps.append(llm_record(i, content=None, tool_calls=[WEATHER]))
        steps.append(tool_record(i + 1, "get_weather", {"city": "Oslo", "t": i}))
    steps[151] = tool_record(151, "get_weather", {"error": "rate_limit", "status": 429})
    text = render_episode(EpisodeView(episode_of(steps)), token_budget=400)
    assert len(text) <= 400 * 4
    assert "s151 tool" in text and "ERROR(rate_limit)" in text
    assert "s0 llm" in text and "s299 tool" in text and "omitted" in text
    full = render_episode(EpisodeView(episode_of(steps[:6])), token_budget=3000)
    assert "omitted" not in full and full.count("\n") == 6


def test_unwritable_cache_does_not_lose_diagnoses(endpoint: tuple[ScriptedEndpoint, str],
                                                  tmp_path: Path) -> None:
    server, url = endpoint
    not_a_db = tmp_path / "cache.duckdb"
    not_a_db.write_text("this is not a database")
    d = LLMDiagnoser(url, "sim-diagnoser", cache_path=str(not_a_db))
    (x,) = d.diagnose_many([episodes()[0].blind()])
    assert (x.fault_type, x.step) == ("error", 2)
    assert "not cached" in d.usage.line("sim-diagnoser")


def test_the_prompt_carries_meanings_effects_and_slips_and_successes_cost_no_call(
        endpoint: tuple[ScriptedEndpoint, str]) -> None:
    from agentchaos_otel import attributes as A
    from diagnosers.prompt import SYSTEM_PROMPT

    retried = [llm_record(0, status_code=429, extra={A.REQUEST_DIGEST: "same"}),
               llm_record(1, content=None, tool_calls=[WEATHER], extra={A.REQUEST_DIGEST: "same"}),
               tool_record(2, "get_weather", {"error": {"code": 4, "message": "slow", "details": []}},
                           args=WEATHER[1]),
               llm_record(3, content=None, tool_calls=[("get_weather", '{"city": Oslo}')]),
               llm_record(4, content="Sorry.")]
    text = render_episode(EpisodeView(episode_of(retried)))
    assert "absorbed (retry at s1 succeeded)" in text
    assert "ERROR(timeout)[error_member grpc:DEADLINE_EXCEEDED]" in text and "then=" in text
    assert " slip" in text and "outcome=failed" in text
    for label in ("auth", "not_found", "invalid_request", "absorbed", "slip", "0.5"):
        assert label in SYSTEM_PROMPT
    server, url = endpoint
    d = LLMDiagnoser(url, "sim-diagnoser")
    (x,) = d.diagnose_many([episode_of(retried, success=True)])
    assert x.fault_type == "none_found" and d.usage.calls == 0
