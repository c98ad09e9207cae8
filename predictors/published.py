"""The tool-response study's failure-predictor figures, shown beside every measured one.

Copied from DESIGN.md section 7 (source document 001). The study's "step" is one agent turn on
BFCL (9.4 per episode), while our steps count LLM and tool spans separately, so its median lead
of 7 is compared with our lead counted in LLM calls as well as in steps.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = ("Tool-response fault study: BFCL v4 multi-turn base, 200 tasks, Qwen3-4B-Instruct-2507 8-bit, "
          "test = 640 episodes (DESIGN.md section 7)")


@dataclass(frozen=True)
class PublishedPredictor:
    auroc: float
    detection: float | None = None
    median_lead: float | None = None


PREDICTOR: dict[str, PublishedPredictor] = {
    "external": PublishedPredictor(auroc=0.846, detection=0.63, median_lead=7),
    "entropy": PublishedPredictor(auroc=0.751),
    "both": PublishedPredictor(auroc=0.851),
}

# Mean token entropy (nat) by episode outcome and mean covered top-20 probability mass.
ENTROPY_SUCCESS = 0.052
ENTROPY_FAILURE = 0.076
TOP20_MASS = 0.999969
FALSE_ALARM_RATE = 0.05
TEST_EPISODES = 640
