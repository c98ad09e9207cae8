"""Double application, counted on the official BFCL execution backend's state.

A retry after a timeout re-sends a call the API had already executed. Whether that changed the
world twice is a property of the state, not of the call log: ``mkdir('a')`` twice fails the
second time and leaves one directory, ``place_order(...)`` twice books two orders. So the
executed calls of an episode are replayed one at a time through BFCL's own
``execute_multi_turn_func_call`` (the function its checker uses), the instances' public
attributes are compared with the checker's ``_compare_instances`` before and after each call,
and a call counts as a double application when it is identical to a call executed at most
``window`` calls earlier in the same turn, and both executions changed the checker's state.
"""

from __future__ import annotations

import copy
import re
import uuid
from dataclasses import dataclass

from agentchaos_otel.agents.bfcl.grade import _lock
from agentchaos_otel.agents.bfcl.tasks import BfclTask

DEFAULT_WINDOW = 3


@dataclass(frozen=True)
class DoubleApplication:
    turn: int
    call: str
    first_index: int  # position of the first execution among the turn's executed calls
    index: int


def _changed(before: dict, after: dict) -> bool:
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import _compare_instances

    return any(not _compare_instances(after[name], before[name])[0] for name in after)


def double_applications(task: BfclTask, executed: list[list[list[str]]],
                        window: int = DEFAULT_WINDOW) -> list[DoubleApplication]:
    """Every identical repeat that changed the official state again, in execution order."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    model_name = f"agentchaos_double_{uuid.uuid4().hex}"
    prefix = re.sub(r"[-./:]", "_", model_name)
    found: list[DoubleApplication] = []
    try:
        instances: dict = {}
        for turn, steps in enumerate(executed):
            calls = [c for step in steps for c in step]
            changed_at: dict[int, bool] = {}
            for i, call in enumerate(calls):
                before = {k: copy.deepcopy(v) for k, v in instances.items()}
                _, instances = multi_turn_utils.execute_multi_turn_func_call(
                    [call], task.initial_config, list(task.involved_classes), model_name, task.id,
                    long_context=task.long_context, is_evaL_run=False)
                if not before:  # first call of the episode: the instances were just created
                    before = {k: _fresh(task, k) for k in instances}
                changed_at[i] = _changed(before, instances)
                if not changed_at[i]:
                    continue
                for j in range(i - 1, max(-1, i - window - 1), -1):
                    if calls[j] == call and changed_at.get(j):
                        found.append(DoubleApplication(turn, call, j, i))
                        break
    finally:
        cache = vars(multi_turn_utils)
        with _lock:
            for key in [k for k in list(cache) if k.startswith(prefix)]:
                cache.pop(key, None)
    return found


def _fresh(task: BfclTask, class_name: str) -> object:
    """The instance as the scenario loads it, for the state before the very first call."""
    from bfcl_eval.constants.executable_backend_config import STATELESS_CLASSES

    from agentchaos_otel.agents.bfcl.tasks import api_class

    instance = api_class(class_name)()
    if class_name not in STATELESS_CLASSES:
        instance._load_scenario(copy.deepcopy(task.initial_config.get(class_name, {})),
                                long_context=task.long_context)
    return instance
