"""Published diagnosis figures our scores are printed beside (DESIGN.md section 7).

AgentChaos (arXiv:2608.06790) evaluated existing diagnosers on 654 failures of Mini-SE on
SWE-bench Pro (21.73 LLM calls per task on average). They are a reference point, not a target
measured on the same corpus: the numbers below come from a different agent and benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "AgentChaos, arXiv:2608.06790: 654 Mini-SE failures on SWE-bench Pro (DESIGN.md section 7)"


@dataclass(frozen=True)
class PublishedDiagnosis:
    method: str
    type_accuracy: float  # percent
    step_accuracy: float  # percent
    n: int = 654


PUBLISHED: dict[str, PublishedDiagnosis] = {
    "rule": PublishedDiagnosis("rule-based", 52.45, 55.50),
    "llm": PublishedDiagnosis("LLM-based", 47.25, 53.52),
}
# Share of truncation faults the published diagnosers identified as truncation, percent.
TRUNCATION_FOUND = 4.3
