"""A store whose span text is hostile to terminals: rich markup and escape sequences from a provider.

A loopback provider answers every chat completion with HTTP 500 and an error body holding what a
real proxy or a compromised upstream can send: ``404 Not Found [/v1/chat/completions]`` (rich
markup to a console), an OSC 52 clipboard write, a window-title change and a screen clear. The
agent records the error it met as its episode's error, and the task id and condition carry the
same text, so every command that prints episodes meets it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

OSC52 = "\x1b]52;c;ZXZpbA==\x07"  # writes "evil" to the clipboard
TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"
MARKUP = "404 Not Found [/v1/chat/completions] [bold red]not bold[/]"
HOSTILE = f"{MARKUP} {OSC52}{TITLE}{CLEAR}"
RAW_CONTROLS = ("\x1b", "\x07")


@contextmanager
def hostile_provider() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("content-length") or 0))
            data = json.dumps({"error": {"message": HOSTILE, "type": "server_error"}}).encode()
            self.send_response(500)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def hostile_store(db: Path, episodes: int = 2) -> Path:
    """Episodes that met the hostile provider, stored in ``db`` through ``configure()``."""
    import openai

    import agentchaos_otel
    from agentchaos_otel.episode_scope import episode

    handle = agentchaos_otel.configure(db=str(db), seed=0)
    try:
        with hostile_provider() as base_url:
            client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0, timeout=10)
            for i in range(episodes):
                with episode(f"{HOSTILE} #{i}", condition=HOSTILE, seed=0) as ep:
                    try:
                        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
                    except openai.APIStatusError as exc:
                        ep.set_outcome(success=False, error=str(exc))
    finally:
        handle.shutdown()
    return db
