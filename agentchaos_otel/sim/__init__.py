"""Simulated model server, policies and the reference tool-using agent.

These exist so the whole toolkit runs and is tested on machines with no LLM. Everything they
produce is simulated (model ids start with ``sim-``, responses carry
``system_fingerprint: "simulated"`` and the ``x-agentchaos-simulated: 1`` header) and must never be
presented as evidence about real models.
"""

from agentchaos_otel.sim.policy import Policy, ScriptedPolicy, Turn
from agentchaos_otel.sim.reference_agent import AgentRun, run_reference_agent, run_reference_agent_async
from agentchaos_otel.sim.reference_policy import ReferencePolicy
from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, TOOL_SPECS, RefTask, reference_tasks
from agentchaos_otel.sim.server import SimulatedModelServer

__all__ = [
    "REFERENCE_TOOLS",
    "TOOL_SPECS",
    "AgentRun",
    "Policy",
    "RefTask",
    "ReferencePolicy",
    "ScriptedPolicy",
    "SimulatedModelServer",
    "Turn",
    "reference_tasks",
    "run_reference_agent",
    "run_reference_agent_async",
]
