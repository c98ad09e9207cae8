"""Diagnosers: name the fault type and the step that caused each failed agent episode.

Three methods share one contract (:class:`~.base.Diagnoser`, fed blind views by
:func:`~.base.diagnose_episodes`): ordered rules (:mod:`.rules`), an OpenAI-compatible LLM
(:mod:`.llm`) and a learned per-step classifier (:mod:`.learned`); :mod:`.evaluate` scores them
against ground truth and :mod:`.cli` is the ``diagnose`` command. All of them read an episode
through :mod:`.observe` (what the agent saw at each step, whichever instrumentation traced it),
:mod:`.view` (comparisons across the episode's steps) and :mod:`.key_style` (key conventions).
"""

from __future__ import annotations

import importlib
from typing import Any

# Imported on first use, so ``diagnose --help`` and ``agentchaos --help`` do not load the rules.
_EXPORTS = {"Diagnoser": "diagnosers.base", "Diagnosis": "diagnosers.base", "diagnose_episodes": "diagnosers.base",
            "TextOnlyDiagnoser": "diagnosers.baseline", "RuleDiagnoser": "diagnosers.rules"}

__all__ = ["Diagnoser", "Diagnosis", "RuleDiagnoser", "TextOnlyDiagnoser", "diagnose_episodes"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'diagnosers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
