"""Notes a command adds on stderr beside its output (stdout stays the output, JSON stays JSON)."""

from __future__ import annotations

import os

import typer


def note_spooled(db: str | os.PathLike[str] | None) -> None:
    """Say how many spans wait in the store's spool: a reader's answer does not include them.

    Every command that reads a store (``traces summary | sql | export``, ``diagnose``, ``report``,
    ``predict``, ``campaign runs``) calls this; a receiver calls it after stopping, when the store
    could not take all.
    """
    if db is None:
        return
    from agentchaos_otel.store.read.spooled import spool_note

    note = spool_note(db)
    if note:
        typer.echo(note, err=True)
