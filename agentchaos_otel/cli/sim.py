"""``agentchaos sim``: run the bundled SIMULATED model server as a standalone process.

Agents in other processes (or other languages) can then be pointed at an OpenAI-compatible
endpoint on a machine with no LLM. Everything it serves is simulated: the banner says so before
the address is shown, model ids start with ``sim-`` and every response is labelled, so nothing
served here can be mistaken for the output of a real model.

Only loopback addresses are accepted: the server has no authentication and is a test fixture,
not a service.
"""

from __future__ import annotations

import enum
import errno
import ipaddress
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentchaos_otel.cli.app import choice, typer_app
from agentchaos_otel.cli.waiting import wait_for_stop
from agentchaos_otel.errors import UserError

if TYPE_CHECKING:
    from agentchaos_otel.sim.policy import Policy

app = typer_app(help="Run the bundled SIMULATED model server (not a real LLM).")

BANNER = "SIMULATED model (not a real LLM)"


@dataclass(frozen=True)
class PolicyEntry:
    """A named simulated model the server can play; ``make`` builds a fresh policy."""

    description: str
    make: Callable[[], Policy]


def _reference() -> Policy:
    from agentchaos_otel.sim.reference_policy import ReferencePolicy

    return ReferencePolicy()


# New simulated models (a BFCL one, noisier variants) are added here and become ``--policy`` values.
POLICIES: dict[str, PolicyEntry] = {
    "reference": PolicyEntry("plays the reference tool-use tasks (agentchaos_otel.sim.reference_tasks); "
                             "other prompts get a labelled placeholder answer", _reference),
}


# The ``--policy`` values.
PolicyName = enum.StrEnum("Policy", {name: name for name in POLICIES})
PolicyName.__doc__ = "A simulated model serve can play."


def loopback_host(host: str) -> str:
    """``host`` if it is an IPv4 loopback address or ``localhost``; BadParameter otherwise."""
    if host == "localhost":
        return host
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise typer.BadParameter(f"{host!r} is not a loopback address; the simulated server only listens on "
                                 "loopback (e.g. 127.0.0.1)", param_hint="--host")
    if address.version != 4:
        raise typer.BadParameter(f"{host!r}: only IPv4 loopback is supported (use 127.0.0.1)",
                                 param_hint="--host")
    return host


def make_policy(name: str) -> Policy:
    return POLICIES[name].make()


def _write_ready_file(path: Path, info: dict[str, Any]) -> None:
    """Written whole (temp file + rename) so a script polling for it never reads half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info) + "\n", encoding="utf-8")
    os.replace(tmp, path)


@app.command("serve")
def serve(
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port; 0 picks a free one (the banner and "
                                                             "--ready-file show which).")] = 8000,
    host: Annotated[str, typer.Option(help="Loopback address to listen on (nothing else is allowed).")]
        = "127.0.0.1",
    seed: Annotated[int, typer.Option(help="Seed of every simulated response (same request, same "
                                           "reply).")] = 0,
    policy: Annotated[PolicyName, choice(PolicyName, "--policy", help="Simulated model to play; see "
                                         "'agentchaos sim policies'.")] = PolicyName["reference"],
    seconds: Annotated[float | None, typer.Option(min=0.0, help="Stop after this many seconds "
                                                                "(default: run until Ctrl-C).")] = None,
    ready_file: Annotated[Path | None, typer.Option(help="Once listening, write JSON {base_url, model, port, "
                                                         "host, pid} here (removed on exit), for scripts "
                                                         "that start the server in the background.")] = None,
) -> None:
    """Serve an OpenAI-compatible chat-completions endpoint backed by a SIMULATED model."""
    from agentchaos_otel.sim.server import SimulatedModelServer

    policy = str(policy)
    host = loopback_host(host)
    sim_policy = make_policy(policy)
    server = SimulatedModelServer(sim_policy, seed=seed, host=host, port=port)
    try:
        server.start()
    except OSError as exc:
        hint = " (another process has it; --port 0 picks a free one)" if exc.errno == errno.EADDRINUSE else ""
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}") from None
    try:
        model = server.model_ids()[0]
        info = {"base_url": server.base_url, "model": model, "port": server.port, "host": host,
                "pid": os.getpid(), "simulated": True}
        typer.echo(f"{BANNER}: every response is generated by the '{policy}' policy, never by a language "
                   "model; do not report it as model behaviour.")
        typer.echo(f"  base_url: {server.base_url}")
        typer.echo(f"  model:    {model}")
        typer.echo(f"  port:     {server.port}")
        typer.echo(f"  seed:     {seed}")
        typer.echo(f"  policy:   {policy} ({POLICIES[policy].description})")
        limit = f"after {seconds:g} s or " if seconds is not None else ""
        typer.echo(f"  stop:     {limit}Ctrl-C")
        typer.echo(f"  try:      OPENAI_BASE_URL={server.base_url} OPENAI_API_KEY=sk-simulated <your agent>")
        if ready_file is not None:
            _write_ready_file(ready_file, info)
        why = wait_for_stop(seconds)
    finally:
        server.stop()
        if ready_file is not None:
            ready_file.unlink(missing_ok=True)
    typer.echo(f"simulated server stopped ({why}) after {server.request_count} requests")


@app.command("policies")
def policies() -> None:
    """The simulated models 'serve --policy' can play."""
    for name in sorted(POLICIES):
        entry = POLICIES[name]
        typer.echo(f"{name:<12} {entry.make().name:<16} {entry.description}")
