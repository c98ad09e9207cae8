"""``agentchaos bfcl``: list the BFCL multi-turn tasks.

Episodes are run by ``agentchaos campaign run --agent bfcl`` (tool-result conditions, LLM-fault
catalog names, seeds, resume, ``--perfect``, ``--step-cap``, ``--logprobs``); this area only
shows what there is to run. Bad arguments end with one ``agentchaos: error:`` line on stderr
(exit 2 for a bad command line, 1 for a failure), never a traceback.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from agentchaos_otel.cli.app import typer_app
from agentchaos_otel.errors import UserError

app = typer_app(help="BFCL v4 multi-turn tasks (run them with 'agentchaos campaign run --agent bfcl').")


@app.callback()
def _group() -> None:
    # A callback keeps ``tasks`` a subcommand: a Typer app with one command and no callback
    # would turn into that command and reject ``agentchaos bfcl tasks``.
    pass


@app.command("tasks")
def tasks_cmd(
    ids: Annotated[str, typer.Option("--tasks", help="Ids, indices or ranges: '0-9,42' or 'all'.")] = "all",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The multi_turn_base tasks: turns, involved API classes, ground-truth call counts."""
    from agentchaos_otel.agents.bfcl import UNAVAILABLE_REASON, bfcl_available

    if not bfcl_available():
        raise UserError(UNAVAILABLE_REASON)
    from agentchaos_otel.agents.bfcl.tasks import load_tasks, resolve_task_ids

    try:
        tasks = load_tasks(ids=resolve_task_ids(ids))
    except KeyError as exc:  # an unknown task id; its message is the first argument
        raise UserError(exc.args[0] if exc.args else str(exc)) from None
    rows = [{"id": t.id, "turns": t.n_turns, "classes": list(t.involved_classes),
             "ground_truth_calls": sum(len(x) for x in t.ground_truth)} for t in tasks]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        typer.echo(f"{r['id']}\tturns={r['turns']}\tcalls={r['ground_truth_calls']}\t{','.join(r['classes'])}")
    typer.echo(f"{len(rows)} tasks")
