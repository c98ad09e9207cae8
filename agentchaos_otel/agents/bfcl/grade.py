"""Grading with BFCL's official multi-turn checker, on fresh instances every time.

The checker re-executes the agent's logged calls and the ground truth on new API instances and
compares state after each turn. It finds those instances in a module-level ``globals()`` cache
keyed by ``{model_name}_{task_id}_{class}``: grading the same task twice under one model name
would replay the second episode on top of the first one's state. Each grading therefore uses a
model-name key nobody else uses and removes its cache entries afterwards.
"""

from __future__ import annotations

import re
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel.agents.bfcl.tasks import BfclTask

_lock = threading.Lock()


@dataclass(frozen=True)
class GradeResult:
    valid: bool
    error_type: str | None = None
    error_message: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


def _is_empty_step(step: list[str]) -> bool:
    return len(step) == 0


def _cache_prefix(model_name: str) -> str:
    return re.sub(r"[-./:]", "_", model_name)


def grade(task: BfclTask, executed: list[list[list[str]]]) -> GradeResult:
    """Official verdict for one episode's executed calls (per turn, per step, call strings).

    Follows BFCL's ``_evaluate_single_multi_turn_entry``: an episode that did not reach every
    turn was force-terminated and fails; empty steps are dropped; then the checker decides.
    """
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker as checker_module
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    ground_truth = [list(t) for t in task.ground_truth]
    if len(executed) != len(ground_truth):
        return GradeResult(False, "multi_turn:force_terminated",
                           f"episode covered {len(executed)} of {len(ground_truth)} turns")
    decoded = [[list(step) for step in turn if not _is_empty_step(step)] for turn in executed]
    model_name = f"agentchaos_{uuid.uuid4().hex}"
    prefix = _cache_prefix(model_name)
    try:
        result = checker_module.multi_turn_checker(decoded, ground_truth, task.as_test_entry(),
                                                   task.category, model_name)
    except Exception as exc:  # an assertion inside the checker is a failed episode, not a crash
        return GradeResult(False, "multi_turn:checker_error", f"{type(exc).__name__}: {exc}")
    finally:
        cache = vars(multi_turn_utils)
        with _lock:  # list() snapshots the keys; other gradings may be adding theirs meanwhile
            for key in [k for k in list(cache) if k.startswith(prefix)]:
                cache.pop(key, None)
    if result.get("valid"):
        return GradeResult(True)
    details = {k: v for k, v in result.items() if k not in ("valid", "error_type", "error_message")}
    return GradeResult(False, result.get("error_type"), result.get("error_message"), details)


def cached_instance_count() -> int:
    """Checker cache entries left behind by our gradings (0 when cleanup works)."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    return sum(1 for k in list(vars(multi_turn_utils)) if k.startswith("agentchaos_"))
