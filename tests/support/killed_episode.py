"""An agent process killed inside an episode: its tool steps are stored, its root span never ends.

``python -m tests.support.killed_episode DB``: configures tracing into DB, runs two tool calls
inside ``episode()``, flushes (so the ended child spans reach the store, as a batch processor's
timer would), then sends itself SIGKILL. What is left is what a killed campaign worker leaves.
"""

from __future__ import annotations

import os
import signal
import sys

from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.tools import ToolFaultInjector
from agentchaos_otel.setup import configure


def main() -> None:
    handle = configure(db=sys.argv[1], instrument=False)
    tools = ToolFaultInjector("none").wrap({"lookup": lambda q: {"answer": q}})
    with episode("killed-task", condition="llm_error_single", seed=0, simulated=True,
                 agent_name="reference-agent"):
        tools["lookup"]("x")
        tools["lookup"]("y")
        handle.force_flush()
        os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
