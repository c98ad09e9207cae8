"""Diagnosers: name the fault type and the step that caused each failed agent episode.

Three methods share one contract (:class:`~diagnosers.base.Diagnoser`, fed blind views by
:func:`~diagnosers.base.diagnose_episodes`): ordered rules (:mod:`diagnosers.rules`), an
OpenAI-compatible LLM (:mod:`diagnosers.llm`) and a learned per-step classifier
(:mod:`diagnosers.learned`); :mod:`diagnosers.evaluate` scores them against ground truth and
:mod:`diagnosers.cli` is the ``diagnose`` command.
"""

from diagnosers.base import Diagnoser, Diagnosis, diagnose_episodes
from diagnosers.baseline import TextOnlyDiagnoser
from diagnosers.rules import RuleDiagnoser

__all__ = ["Diagnoser", "Diagnosis", "RuleDiagnoser", "TextOnlyDiagnoser", "diagnose_episodes"]
