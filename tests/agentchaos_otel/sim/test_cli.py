"""``agentchaos sim serve``: a real loopback server that the openai SDK can talk to, and its refusals."""

from __future__ import annotations

import _thread
import json
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from typer.testing import CliRunner

from agentchaos_otel.cli.sim import BANNER, app
from agentchaos_otel.sim.reference_tasks import TOOL_SPECS, reference_tasks
from agentchaos_otel.sim.server import SIMULATED_HEADER

runner = CliRunner()


def _client_session(ready: Path, out: dict[str, Any], gone: threading.Event) -> None:
    """What a separate agent process would do: find the server, make one request, then Ctrl-C it.

    ``gone`` is set once the command has returned: a session that never found its server must not
    interrupt whatever the main thread runs next.
    """
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            if gone.wait(0.02):
                out["error"] = RuntimeError("the command ended before the server was ready")
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the server never wrote its ready file")
        info = json.loads(ready.read_text(encoding="utf-8"))
        out["info"] = info
        task = reference_tasks(1, seed=0)[0]
        with openai.OpenAI(base_url=info["base_url"], api_key="sk-simulated", max_retries=0) as client:
            out["models"] = [m.id for m in client.models.list()]
            raw = client.chat.completions.with_raw_response.create(
                model=info["model"], messages=[{"role": "user", "content": task.prompt}],
                tools=list(TOOL_SPECS.values()))
            out["header"] = raw.headers.get(SIMULATED_HEADER)
            out["response"] = raw.parse()
    except BaseException as exc:  # reported by the test, not lost in the thread
        out["error"] = exc
    finally:
        if not gone.is_set():
            _thread.interrupt_main()  # stands in for the user's Ctrl-C


def _serve_with_client(ready: Path, *args: str) -> tuple[Any, dict[str, Any]]:
    out: dict[str, Any] = {}
    gone = threading.Event()
    thread = threading.Thread(target=_client_session, args=(ready, out, gone), daemon=True)
    thread.start()
    # --seconds is only a safety net here: the client thread stops the server once it is done.
    # Where SIGINT is ignored (a background job, as in CI), interrupt_main() does nothing: install
    # Python's own handler for the duration, as an interactive terminal would have it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        result = runner.invoke(app, ["serve", "--port", "0", "--seconds", "120", "--ready-file", str(ready),
                                     *args])
    finally:
        gone.set()
        signal.signal(signal.SIGINT, previous)
    thread.join(timeout=10)
    return result, out


def test_serve_answers_a_real_sdk_request_on_the_port_it_prints(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    result, out = _serve_with_client(ready, "--seed", "3")
    assert "error" not in out, out.get("error")
    assert result.exit_code == 0, result.output
    info = out["info"]
    assert info["simulated"] is True and info["model"] == "sim-reference"
    assert info["port"] > 0 and info["base_url"] == f"http://127.0.0.1:{info['port']}/v1"
    lines = result.output.splitlines()
    assert lines[0].startswith(BANNER)
    assert f"  base_url: {info['base_url']}" in lines
    assert f"  port:     {info['port']}" in lines
    assert "  model:    sim-reference" in lines
    assert out["models"] == ["sim-reference"]
    response = out["response"]
    assert out["header"] == "1"
    assert response.model.startswith("sim-") and response.system_fingerprint == "simulated"
    calls = response.choices[0].message.tool_calls
    assert calls and calls[0].function.name in TOOL_SPECS
    assert "stopped (interrupted) after 2 requests" in lines[-1]
    assert not ready.exists()  # a stale ready file would point scripts at a dead server


def test_seconds_limits_the_run_time_without_any_client() -> None:
    result = runner.invoke(app, ["serve", "--port", "0", "--seconds", "0.2"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(BANNER)
    assert "after 0.2 s or Ctrl-C" in result.output
    assert "stopped (time limit reached) after 0 requests" in result.output


def test_same_seed_gives_the_same_reply_across_server_processes(tmp_path: Path) -> None:
    """The printed seed is the whole story: two runs with it answer the same request identically."""
    replies = []
    for i in range(2):
        result, out = _serve_with_client(tmp_path / f"ready{i}.json", "--seed", "9")
        assert result.exit_code == 0 and "error" not in out, (result.output, out.get("error"))
        message = out["response"].choices[0].message
        replies.append([(c.function.name, c.function.arguments) for c in message.tool_calls or []])
    assert replies[0] and replies[0] == replies[1]


def test_unknown_policy_is_refused_with_the_available_ones() -> None:
    result = runner.invoke(app, ["serve", "--port", "0", "--seconds", "0", "--policy", "gpt-4o"])
    assert result.exit_code != 0
    assert "unknown policy 'gpt-4o'" in result.output and "choose one of reference" in result.output
    assert BANNER not in result.output


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::1"])
def test_only_ipv4_loopback_hosts_are_allowed(host: str) -> None:
    result = runner.invoke(app, ["serve", "--port", "0", "--seconds", "0", "--host", host])
    assert result.exit_code != 0
    assert "--host" in result.output and BANNER not in result.output


def test_localhost_and_other_loopback_addresses_are_served() -> None:
    for host in ("localhost", "127.0.0.2"):
        result = runner.invoke(app, ["serve", "--port", "0", "--seconds", "0", "--host", host])
        assert result.exit_code == 0, result.output
        assert f"  base_url: http://{host}:" in result.output


def test_port_in_use_is_a_one_line_error() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["serve", "--port", str(port), "--seconds", "0"])
    assert result.exit_code != 0
    assert f"cannot listen on 127.0.0.1:{port}" in result.output and "in use" in result.output
    assert BANNER not in result.output


def test_policies_lists_the_model_ids() -> None:
    result = runner.invoke(app, ["policies"])
    assert result.exit_code == 0
    assert result.output.split()[:2] == ["reference", "sim-reference"]


def test_mounted_under_the_main_command() -> None:
    from agentchaos_otel.cli.main import app as main_app

    ok = runner.invoke(main_app, ["sim", "serve", "--port", "0", "--seconds", "0"])
    assert ok.exit_code == 0, ok.output
    assert ok.output.startswith(BANNER)
    bad = runner.invoke(main_app, ["sim", "serve", "--policy", "nope"])
    assert bad.exit_code != 0
    lines = [line for line in bad.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "unknown policy 'nope'; choose one of reference" in lines[0]
