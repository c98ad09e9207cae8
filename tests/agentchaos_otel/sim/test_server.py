"""The simulated OpenAI-compatible server, exercised over real loopback HTTP with the openai SDK."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
import random
import re
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest

from agentchaos_otel.sim.logprobs import tokenize
from agentchaos_otel.sim.policy import ScriptedPolicy, Turn, last_user_text
from agentchaos_otel.sim.server import SIMULATED_HEADER, SimulatedModelServer

TEXT = ("The weather in Lisbon is sunny today, with a high of 24 C and a light breeze from the west; "
        "no rain is expected before Friday.")


class EchoPolicy:
    """Text or a tool call depending on the user message; uncertainty taken from the message."""

    name = "sim-echo"

    def respond(self, request: dict[str, Any], rng: random.Random) -> Turn:
        text = last_user_text(request)
        u = float(text.split("u=", 1)[1].split()[0]) if "u=" in text else 0.1
        if text.startswith("TOOL"):
            return Turn(tool_calls=[("get_weather", {"city": "Lisbon", "unit": "celsius"}),
                                    ("get_population", {"city": "Porto"})], uncertainty=u)
        if text.startswith("RANDOM"):
            return Turn(content=f"{TEXT} Lucky number {rng.randint(0, 10**9)}.", uncertainty=u)
        if text.startswith("LONG"):
            return Turn(content=TEXT * 2000)
        if text.startswith("FAIL"):
            raise RuntimeError("policy bug")
        return Turn(content=TEXT, uncertainty=u)


def msgs(text: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}]


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatedModelServer]:
    with SimulatedModelServer(EchoPolicy(), seed=11) as srv:
        yield srv


@pytest.fixture(scope="module")
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client() as c:  # one client: building one per request costs far more than the request
        yield c


@pytest.fixture(scope="module")
def client(server: SimulatedModelServer) -> Iterator[openai.OpenAI]:
    c = openai.OpenAI(api_key="sk-simulated", base_url=server.base_url, max_retries=0)
    yield c
    c.close()


def test_text_completion_is_labelled_simulated_with_consistent_usage(client: openai.OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(model="sim-echo", messages=msgs("hello"))
    resp = raw.parse()
    assert raw.headers[SIMULATED_HEADER] == "1"
    assert raw.headers["x-request-id"].startswith("req_")
    assert raw.headers["content-type"] == "application/json"
    assert int(raw.headers["content-length"]) == len(raw.http_response.content)
    assert resp.model == "sim-echo" and resp.system_fingerprint == "simulated"
    assert resp.object == "chat.completion" and resp.id.startswith("chatcmpl-")
    choice = resp.choices[0]
    assert choice.message.content == TEXT and choice.finish_reason == "stop"
    assert not choice.message.tool_calls and choice.logprobs is None
    assert resp.usage.completion_tokens == len(tokenize(TEXT))
    assert resp.usage.prompt_tokens > len(tokenize("Be brief.")) + len(tokenize("hello"))
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens


def test_non_sim_model_names_are_answered_as_simulated(client: openai.OpenAI) -> None:
    resp = client.chat.completions.create(model="gpt-4o", messages=msgs("hello"))
    assert resp.model == "sim-gpt-4o"


def test_tool_calls_have_openai_shape(client: openai.OpenAI) -> None:
    resp = client.chat.completions.create(model="sim-echo", messages=msgs("TOOL please"))
    choice = resp.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    calls = choice.message.tool_calls
    assert [c.function.name for c in calls] == ["get_weather", "get_population"]
    assert json.loads(calls[0].function.arguments) == {"city": "Lisbon", "unit": "celsius"}
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", c.id) for c in calls)
    assert calls[0].id != calls[1].id
    expected = sum(len(tokenize(c.function.name)) + len(tokenize(c.function.arguments)) for c in calls)
    assert resp.usage.completion_tokens == expected


async def test_async_client(server: SimulatedModelServer) -> None:
    async with openai.AsyncOpenAI(api_key="sk-simulated", base_url=server.base_url, max_retries=0) as c:
        results = await asyncio.gather(*[
            c.chat.completions.create(model="sim-echo", messages=msgs(f"RANDOM {i}")) for i in range(8)])
    texts = [r.choices[0].message.content for r in results]
    assert all(t.startswith(TEXT) for t in texts)
    assert len(set(texts)) == 8  # each conversation has its own random stream


def _collect(stream: Any) -> tuple[str, dict[int, dict[str, str]], list[str | None], list[Any]]:
    content, calls, finishes, usage = [], {}, [], []
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk" and chunk.system_fingerprint == "simulated"
        usage.append(chunk.usage)
        for ch in chunk.choices:
            if ch.delta.content:
                content.append(ch.delta.content)
            for tc in ch.delta.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                slot["id"] += tc.id or ""
                slot["name"] += (tc.function.name or "") if tc.function else ""
                slot["arguments"] += (tc.function.arguments or "") if tc.function else ""
            finishes.append(ch.finish_reason)
    return "".join(content), calls, finishes, usage


def test_streaming_with_usage_matches_non_streaming(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="sim-echo", messages=msgs("hello"))
    stream = client.chat.completions.create(model="sim-echo", messages=msgs("hello"), stream=True,
                                            stream_options={"include_usage": True})
    text, calls, finishes, usage = _collect(stream)
    assert text == plain.choices[0].message.content and not calls
    assert [f for f in finishes if f] == ["stop"]
    assert usage[-1] is not None and all(u is None for u in usage[:-1])
    assert usage[-1].completion_tokens == plain.usage.completion_tokens
    assert usage[-1].prompt_tokens == plain.usage.prompt_tokens


def test_streaming_tool_calls_reassemble(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="sim-echo", messages=msgs("TOOL"))
    _, calls, finishes, usage = _collect(client.chat.completions.create(
        model="sim-echo", messages=msgs("TOOL"), stream=True))
    assert [f for f in finishes if f] == ["tool_calls"]
    assert all(u is None for u in usage)  # no usage chunk unless asked for
    want = [(c.id, c.function.name, c.function.arguments) for c in plain.choices[0].message.tool_calls]
    assert [(calls[i]["id"], calls[i]["name"], calls[i]["arguments"]) for i in sorted(calls)] == want


def test_sse_uses_chunked_transfer_and_done(server: SimulatedModelServer, http: httpx2.Client) -> None:
    r = http.post(f"{server.base_url}/chat/completions",
                  json={"model": "sim-echo", "messages": msgs("hello"), "stream": True})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["transfer-encoding"] == "chunked" and "content-length" not in r.headers
    events = [line for line in r.text.split("\n\n") if line]
    assert events[-1] == "data: [DONE]"
    assert all(e.startswith("data: ") for e in events)


def test_top_20_logprobs(client: openai.OpenAI) -> None:
    resp = client.chat.completions.create(model="sim-echo", messages=msgs("hello"), logprobs=True,
                                          top_logprobs=20)
    entries = resp.choices[0].logprobs.content
    assert "".join(e.token for e in entries) == TEXT
    for e in entries:
        assert len(e.top_logprobs) == 20
        tokens = [t.token for t in e.top_logprobs]
        assert len(set(tokens)) == 20 and e.token in tokens
        probs = [math.exp(t.logprob) for t in e.top_logprobs]
        assert probs == sorted(probs, reverse=True)
        assert sum(probs) <= 1.0
        assert e.logprob == next(t.logprob for t in e.top_logprobs if t.token == e.token)
        assert e.bytes == list(e.token.encode())


def test_logprobs_on_tool_call_turns_and_streams(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="sim-echo", messages=msgs("TOOL"), logprobs=True,
                                           top_logprobs=5)
    entries = plain.choices[0].logprobs.content
    assert plain.usage.completion_tokens == len(entries)
    streamed = []
    for chunk in client.chat.completions.create(model="sim-echo", messages=msgs("TOOL"), logprobs=True,
                                                top_logprobs=5, stream=True):
        for ch in chunk.choices:
            if ch.logprobs and ch.logprobs.content:
                streamed.extend(ch.logprobs.content)
    assert [(e.token, e.logprob) for e in streamed] == [(e.token, e.logprob) for e in entries]


def _entropy(entries: list[Any]) -> float:
    values = []
    for e in entries:
        values.append(-sum(math.exp(t.logprob) * t.logprob for t in e.top_logprobs))
    return sum(values) / len(values)


def test_entropy_follows_policy_uncertainty(client: openai.OpenAI) -> None:
    def mean_entropy(u: float) -> float:
        out = []
        for i in range(6):
            r = client.chat.completions.create(model="sim-echo", messages=msgs(f"hello u={u} #{i}"),
                                               logprobs=True, top_logprobs=20)
            out.append(_entropy(r.choices[0].logprobs.content))
        return sum(out) / len(out)

    calm, unsure = mean_entropy(0.05), mean_entropy(0.6)
    assert calm < 0.1
    assert unsure > 3 * calm


def test_max_tokens_cuts_text_and_tool_arguments(client: openai.OpenAI) -> None:
    r = client.chat.completions.create(model="sim-echo", messages=msgs("hello"), max_tokens=7)
    assert r.choices[0].finish_reason == "length" and r.usage.completion_tokens == 7
    assert TEXT.startswith(r.choices[0].message.content) and r.choices[0].message.content != TEXT
    r = client.chat.completions.create(model="sim-echo", messages=msgs("TOOL"), max_completion_tokens=8)
    calls = r.choices[0].message.tool_calls
    assert r.choices[0].finish_reason == "length" and len(calls) == 1
    with pytest.raises(json.JSONDecodeError):
        json.loads(calls[0].function.arguments)
    assert r.usage.completion_tokens == 8


def test_stop_sequence(client: openai.OpenAI) -> None:
    r = client.chat.completions.create(model="sim-echo", messages=msgs("hello"), stop=[" with"])
    assert r.choices[0].message.content == "The weather in Lisbon is sunny today,"
    assert r.choices[0].finish_reason == "stop"


def test_n_choices(client: openai.OpenAI) -> None:
    r = client.chat.completions.create(model="sim-echo", messages=msgs("RANDOM"), n=3)
    assert [c.index for c in r.choices] == [0, 1, 2]
    assert len({c.message.content for c in r.choices}) == 3


def _body(http: httpx2.Client, server: SimulatedModelServer, payload: dict[str, Any]) -> dict[str, Any]:
    body = http.post(f"{server.base_url}/chat/completions", json=payload).json()
    body.pop("created")
    return body


def test_same_seed_and_request_give_same_response_from_16_threads(http: httpx2.Client) -> None:
    payloads = [{"model": "sim-echo", "messages": msgs(f"RANDOM {i % 4}"), "logprobs": True,
                 "top_logprobs": 3} for i in range(48)]
    payloads += [{"model": "sim-echo", "messages": msgs("TOOL")} for _ in range(16)]
    with SimulatedModelServer(EchoPolicy(), seed=5) as a, SimulatedModelServer(EchoPolicy(), seed=5) as b:
        reference = {json.dumps(p, sort_keys=True): _body(http, b, p) for p in payloads[:4] + payloads[-1:]}
        results: list[tuple[str, dict[str, Any]]] = []
        lock = threading.Lock()
        barrier = threading.Barrier(16)

        def worker(k: int) -> None:
            barrier.wait()
            for p in payloads[k::16]:
                body = _body(http, a, p)
                with lock:
                    results.append((json.dumps(p, sort_keys=True), body))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert a.request_count == len(payloads)
    assert len(results) == len(payloads)
    for key, body in results:
        assert body == reference[key]


def test_different_seeds_differ(http: httpx2.Client) -> None:
    p = {"model": "sim-echo", "messages": msgs("TOOL"), "logprobs": True}
    with SimulatedModelServer(EchoPolicy(), seed=1) as a, SimulatedModelServer(EchoPolicy(), seed=2) as b:
        ba, bb = _body(http, a, p), _body(http, b, p)
    ca, cb = ba["choices"][0]["message"]["tool_calls"], bb["choices"][0]["message"]["tool_calls"]
    assert [c["function"] for c in ca] == [c["function"] for c in cb]
    assert [c["id"] for c in ca] != [c["id"] for c in cb]


def _assert_error_shape(body: dict[str, Any]) -> dict[str, Any]:
    err = body["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"]
    return err


def test_unknown_path_is_404_with_openai_error(server: SimulatedModelServer, client: openai.OpenAI,
                                                http: httpx2.Client) -> None:
    r = http.post(f"{server.base_url}/completions", json={"model": "sim-echo", "prompt": "x"})
    g = http.get(f"http://127.0.0.1:{server.port}/nowhere")
    for resp in (r, g):
        assert resp.status_code == 404 and resp.headers[SIMULATED_HEADER] == "1"
        assert _assert_error_shape(resp.json())["type"] == "invalid_request_error"
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="sim-echo", input="x")


def test_malformed_json_is_400_with_openai_error(server: SimulatedModelServer, http: httpx2.Client) -> None:
    r = http.post(f"{server.base_url}/chat/completions", content=b'{"model": "sim-echo", "messages": [',
                  headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert "parse the JSON body" in _assert_error_shape(r.json())["message"]
    ok = http.post(f"{server.base_url}/chat/completions", json={"model": "sim-echo", "messages": msgs("x")})
    assert ok.status_code == 200  # the connection and server survive a bad request


@pytest.mark.parametrize(("payload", "param"), [
    ({"model": "sim-echo"}, "messages"),
    ({"messages": msgs("x")}, "model"),
    ({"model": "sim-echo", "messages": msgs("x"), "logprobs": True, "top_logprobs": 21}, "top_logprobs"),
    ({"model": "sim-echo", "messages": msgs("x"), "top_logprobs": 3}, "logprobs"),
    ({"model": "sim-echo", "messages": msgs("x"), "stream_options": {"include_usage": True}},
     "stream_options"),
    ({"model": "sim-echo", "messages": msgs("x"), "max_tokens": 0}, "max_tokens"),
])
def test_invalid_requests_are_400(server: SimulatedModelServer, http: httpx2.Client, payload: dict[str, Any],
                                  param: str) -> None:
    r = http.post(f"{server.base_url}/chat/completions", json=payload)
    assert r.status_code == 400
    assert _assert_error_shape(r.json())["param"] == param


def test_sdk_raises_bad_request_for_invalid_top_logprobs(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="sim-echo", messages=msgs("x"), logprobs=True, top_logprobs=25)


def test_policy_failure_is_a_500_server_error(client: openai.OpenAI) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(model="sim-echo", messages=msgs("FAIL"))
    assert info.value.body["type"] == "server_error"


def test_models_endpoint(client: openai.OpenAI, server: SimulatedModelServer) -> None:
    assert [m.id for m in client.models.list()] == ["sim-echo"]
    assert client.models.retrieve("sim-echo").owned_by == "agentchaos-simulated"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-4o")


def test_keep_alive_and_gzip() -> None:
    with SimulatedModelServer(EchoPolicy(), gzip_responses=True) as srv:
        host, port = "127.0.0.1", srv.port
        body = json.dumps({"model": "sim-echo", "messages": msgs("hello")}).encode()
        req = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
               f"Accept-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        with socket.create_connection((host, port), timeout=5) as s:
            for _ in range(2):  # two requests on one connection
                s.sendall(req)
                head = b""
                while b"\r\n\r\n" not in head:
                    head += s.recv(1)
                lines = head.decode().split("\r\n")[1:]
                headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines if ": " in line)}
                assert headers["content-encoding"] == "gzip"
                need = int(headers["content-length"])
                data = b""
                while len(data) < need:
                    data += s.recv(need - len(data))
        assert json.loads(gzip.decompress(data))["choices"][0]["message"]["content"] == TEXT
        with openai.OpenAI(api_key="k", base_url=srv.base_url, max_retries=0) as c:  # SDK decodes it
            r = c.chat.completions.create(model="sim-echo", messages=msgs("hi"))
            assert r.choices[0].message.content == TEXT
        assert srv.request_count == 3


def test_scripted_policy_by_turn_index_and_name_rule() -> None:
    pol = ScriptedPolicy([Turn(content="first"), Turn(tool_calls=[("t", {})])], after_end=Turn(content="end"))
    rng = random.Random(0)
    assert pol.respond({"messages": msgs("x")}, rng).content == "first"
    two = msgs("x") + [{"role": "assistant", "content": "first"}]
    assert pol.respond({"messages": two}, rng).resolved_finish_reason == "tool_calls"
    three = two + [{"role": "assistant", "content": "again"}]
    assert pol.respond({"messages": three}, rng).content == "end"
    with pytest.raises(ValueError):
        ScriptedPolicy([], name="gpt-4o")
    with pytest.raises(ValueError):
        SimulatedModelServer(type("P", (), {"name": "real-model", "respond": None})())


def test_base_url_requires_running_server() -> None:
    srv = SimulatedModelServer(EchoPolicy())
    with pytest.raises(RuntimeError):
        _ = srv.base_url
    with srv:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", srv.base_url)


@pytest.mark.parametrize("stream", [False, True])
def test_client_hanging_up_mid_response_is_quiet(server: SimulatedModelServer, client: openai.OpenAI,
                                                 capfd: pytest.CaptureFixture[str], stream: bool) -> None:
    body = json.dumps({"model": "sim-echo", "messages": msgs("LONG"), "stream": stream}).encode()
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            s.sendall((f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
                       "Content-Type: application/json\r\n\r\n").encode() + body)
            assert s.recv(64).startswith(b"HTTP/1.1 200")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    r = client.chat.completions.create(model="sim-echo", messages=msgs("hello"))
    assert r.choices[0].message.content == TEXT
    assert "Traceback" not in capfd.readouterr().err
