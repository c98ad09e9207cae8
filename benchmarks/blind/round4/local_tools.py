"""The five tools that run in the agent's process, as plain functions for ``Episode.wrap_tools``.

They return the backend's answer as text (an error body too, as a REST wrapper would) and raise
for the failures a runtime raises (exceptions, stack traces) and for bad arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.blind.round4.tools import LOCAL_TOOLS
from benchmarks.blind.round4.toolside import serve


class ToolBackendError(RuntimeError):
    """The backend failed (its own text is the message)."""


def local_tools(task_id: str) -> dict[str, Callable[..., str]]:
    def make(name: str) -> Callable[..., str]:
        def tool(**kwargs: Any) -> str:
            text, _is_error, raised = serve(task_id, name, kwargs)
            if raised:
                raise ToolBackendError(text)
            return text
        tool.__name__ = name
        tool.__qualname__ = name
        return tool
    return {name: make(name) for name in LOCAL_TOOLS}
