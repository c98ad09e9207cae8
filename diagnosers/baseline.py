"""Text-only baseline: the final output text alone, as AgentChaos's released diagnoser does.

It sees only what the last LLM reply's text says (error wording, emptiness, garbling, a JSON body
where prose was expected), never finish reasons, tool calls, tool results or timing, and always
points at the last LLM step. It shows how much the per-step trace adds over the final answer.
"""

from __future__ import annotations

from agentchaos_otel.records import EpisodeTrace
from diagnosers.base import Diagnosis, none_found
from diagnosers.rules import CONTENT_ANOMALY_MIN, reply_error_type
from diagnosers.view import EpisodeView


class TextOnlyDiagnoser:
    name = "text"

    def diagnose(self, episode: EpisodeTrace) -> Diagnosis:
        view = EpisodeView(episode)
        last = next((o for o in reversed(view.obs) if o.kind == "llm"), None)
        if last is None:
            return none_found(episode, self.name, "no LLM step")

        def out(ftype: str, conf: float, why: str) -> Diagnosis:
            return Diagnosis(episode.trace_id, episode.task_id, self.name, ftype, "content", last.step,
                             last.span_id, conf, f"final text of step {last.step}: {why}", "final_text")

        ftype = reply_error_type(last)
        if ftype:
            return out(ftype, 0.7, f"reads like an error ({last.content_failure_evidence})")
        if last.mojibake > 0 or last.unicode_anomaly >= CONTENT_ANOMALY_MIN:
            return out("corrupt", 0.6, "garbled characters")
        if last.content_length == 0 and not last.tool_call_count:
            return out("empty", 0.6, "empty")
        return none_found(episode, self.name, "final text looks normal")
