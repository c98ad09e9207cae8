"""Run by the ``opentelemetry-instrument`` launcher before it starts the program (see ``zero_code``).

The launcher imports every ``opentelemetry_environment_variables`` entry point to build its
command-line flags; this module is ours. Importing it names our distro and configurator for the
program when the user asked for this project and chose none, so the choice does not depend on
the order in which Python happens to list installed packages. It is never imported elsewhere.

Asking for this project means setting a variable that asks for injection or the store
(``settings.asks_for_us``: ``AGENTCHAOS_PLAN``, ``_SEED``, ``_DB``, ``_TASK_ID``) or naming our
exporter in ``OTEL_TRACES_EXPORTER``; ``AGENTCHAOS_DEBUG``, a cache directory or a receiver's
settings in the environment leave the user's distro alone.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

from agentchaos_otel import settings

ENTRY_POINT_NAME = "agentchaos"
DUCKDB_EXPORTER = "agentchaos_duckdb"


def asked_for_us(env: MutableMapping[str, str]) -> bool:
    exporters = [name.strip() for name in env.get("OTEL_TRACES_EXPORTER", "").split(",")]
    return settings.asks_for_us(env) or DUCKDB_EXPORTER in exporters


def select(env: MutableMapping[str, str]) -> None:
    if asked_for_us(env):
        env.setdefault("OTEL_PYTHON_DISTRO", ENTRY_POINT_NAME)
        env.setdefault("OTEL_PYTHON_CONFIGURATOR", ENTRY_POINT_NAME)


select(os.environ)
