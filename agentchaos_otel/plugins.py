"""What other packages plug into the core: analysis that runs live, verdicts for export, commands.

The core never imports the analysis packages (``diagnosers``, ``predictors``): they register
here through entry points, as OpenTelemetry instrumentors do, so an install without them keeps a
light core, and a user's own diagnoser or command can take the same place.

Groups:

- ``agentchaos_otel.live``: span-processor factories ``configure()`` adds on request
  (``diagnosis``: no arguments, the processor has ``on_episode_end(episode)``; ``prediction``:
  ``(model_file, on_alarm=...)``).
- ``agentchaos_otel.verdicts``: ``(db) -> {trace_id: [diagnosis row, ...]}`` for episodes no
  stored diagnosis covers (``traces export``).
- ``agentchaos_otel.commands``: typer apps mounted as sub-commands of ``agentchaos``.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from agentchaos_otel.errors import UserError

LIVE = "agentchaos_otel.live"
VERDICTS = "agentchaos_otel.verdicts"
COMMANDS = "agentchaos_otel.commands"


class PluginMissing(UserError, LookupError):
    """A plug-in the caller asked for is not installed."""


def available(group: str) -> dict[str, EntryPoint]:
    """The entry points of ``group`` by name (the first one wins when two share a name)."""
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=group):
        found.setdefault(ep.name, ep)
    return found


def load(group: str, name: str) -> Any:
    """The object registered as ``name`` in ``group``; a clear error when none is installed."""
    ep = available(group).get(name)
    if ep is None:
        raise PluginMissing(f"no {name!r} plug-in in entry-point group {group!r}: install agentchaos-otel "
                            "with its analysis packages (pip install 'agentchaos-otel[analysis]')")
    return ep.load()
