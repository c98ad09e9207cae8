"""Fresh BFCL API instances for one episode, and tool execution on them.

BFCL's own inference loop keeps its instances in a module-level ``globals()`` cache keyed by
model name and task id, so two runs of the same task under one model name silently share state.
Here every episode owns its instances outright; nothing is cached between episodes.

Execution mirrors what BFCL's ``execute_multi_turn_func_call`` does to a decoded call string
(the call, a refusal of a few dangerous names, ``Error during execution: ...`` on any exception)
but returns the raw Python result, so the tool-result injector can fault the structure the API
returned rather than a string.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable
from typing import Any

from agentchaos_otel.agents.bfcl.tasks import BfclTask, api_class

# Names BFCL refuses to evaluate even when a class happens to define them.
_REFUSED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
ERROR_PREFIX = "Error during execution: "


def _stateless_classes() -> frozenset[str]:
    from bfcl_eval.constants.executable_backend_config import STATELESS_CLASSES

    return frozenset(STATELESS_CLASSES)


class BfclEnv:
    """The API instances of one episode of one task."""

    def __init__(self, task: BfclTask) -> None:
        self.task = task
        self.instances: dict[str, Any] = {}
        self._methods: dict[str, Callable[..., Any]] = {}
        stateless = _stateless_classes()
        for class_name in task.involved_classes:
            instance = api_class(class_name)()
            if class_name not in stateless:
                config = copy.deepcopy(task.initial_config.get(class_name, {}))
                instance._load_scenario(config, long_context=task.long_context)
            self.instances[class_name] = instance
            # Later classes win on a name clash, as in BFCL's name -> instance mapping.
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self._methods[name] = method

    @property
    def function_names(self) -> list[str]:
        return sorted(self._methods)

    def has(self, name: str) -> bool:
        return name in self._methods and name not in _REFUSED

    def execute(self, name: str, args: dict[str, Any]) -> Any:
        """Run one call; API exceptions become BFCL's error string instead of propagating."""
        if not self.has(name):
            return f"{ERROR_PREFIX}name '{name}' is not defined"
        try:
            return self._methods[name](**args)
        except Exception as exc:  # the APIs raise plain exceptions on bad arguments
            return f"{ERROR_PREFIX}{exc}"

    def tool_functions(self) -> dict[str, Callable[..., Any]]:
        """Callables by tool name, in the ``fn(**arguments)`` shape tool wrappers expect."""
        def bind(tool: str) -> Callable[..., Any]:
            def run(**kwargs: Any) -> Any:
                return self.execute(tool, kwargs)
            run.__name__ = tool
            return run
        return {name: bind(name) for name in self._methods if name not in _REFUSED}

    def state(self) -> dict[str, dict[str, Any]]:
        """Public attributes of every instance: what the checker compares, as a deep copy."""
        return {name: copy.deepcopy({k: v for k, v in vars(inst).items() if not k.startswith("_")})
                for name, inst in self.instances.items()}


def render_result(result: Any) -> str:
    """What the model is shown for a tool result, following BFCL where BFCL has a rule.

    Strings pass through (a malformed-JSON fault is a cut string and must stay cut); dicts are
    JSON as in BFCL; other values are JSON-serialised, falling back to ``str`` like BFCL does for
    objects it cannot serialise.
    """
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result)
    except (TypeError, ValueError):
        return str(result)
