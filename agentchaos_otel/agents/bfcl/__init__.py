"""BFCL v4 multi-turn harness: tasks, fresh API instances, agent loop, official grading.

Needs the ``bfcl-eval`` package, installed without its heavy dependencies by
``agentchaos_otel/agents/bfcl/install.sh``; :func:`bfcl_available` lets callers and tests check first.
"""

from __future__ import annotations

import functools


@functools.cache
def bfcl_available() -> bool:
    """True when the BFCL data files, API classes and multi-turn checker all import."""
    try:
        from importlib import resources

        from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING
        from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker  # noqa: F401

        if not (resources.files("bfcl_eval") / "data" / "BFCL_v4_multi_turn_base.json").is_file():
            return False
        import importlib

        for module in set(CLASS_FILE_PATH_MAPPING.values()):
            if module.endswith(("gorilla_file_system", "math_api", "message_api", "posting_api",
                                "ticket_api", "trading_bot", "travel_booking", "vehicle_control")):
                importlib.import_module(module)
    except Exception:
        return False
    return True


UNAVAILABLE_REASON = "bfcl-eval is not installed (run: bash agentchaos_otel/agents/bfcl/install.sh)"

__all__ = ["UNAVAILABLE_REASON", "bfcl_available"]
