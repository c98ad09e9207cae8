"""Diagnosers: name the fault type and the step that caused each failed agent episode.

Three methods share one contract (:class:`~.base.Diagnoser`, fed blind views by
:func:`~.base.diagnose_episodes`): ordered rules (:mod:`.rules`), an OpenAI-compatible LLM
(:mod:`.llm`) and a learned per-step classifier (:mod:`.learned`); :mod:`.evaluate` scores them
against ground truth and :mod:`.cli` is the ``diagnose`` command. All of them read an episode
through :mod:`.observe` (what the agent saw at each step, whichever instrumentation traced it),
:mod:`.view` (comparisons across the episode's steps) and :mod:`.key_style` (key conventions).
"""

from diagnosers.base import Diagnoser, Diagnosis, diagnose_episodes
from diagnosers.baseline import TextOnlyDiagnoser
from diagnosers.rules import RuleDiagnoser

__all__ = ["Diagnoser", "Diagnosis", "RuleDiagnoser", "TextOnlyDiagnoser", "diagnose_episodes"]
