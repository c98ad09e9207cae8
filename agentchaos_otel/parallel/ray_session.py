"""Joining or starting a Ray cluster for one command, with nothing downloaded at run time.

Ray is an optional dependency (``pip install 'agentchaos-otel[ray]'``). ``address`` is passed to
``ray.init`` as is: ``None`` or ``"local"`` starts a private local instance on loopback, ``"auto"``
or ``"ray://host:10001"`` joins an existing cluster, whose nodes must have this package installed
(no runtime environment is shipped, so Ray installs and downloads nothing). Usage statistics
reporting is switched off before Ray starts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agentchaos_otel.errors import UserError


class RayUnavailable(UserError, RuntimeError):
    """Ray is not installed or the cluster cannot be reached; the message is one line."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--executor ray needs Ray: pip install 'agentchaos-otel[ray]'") from None
    return ray


@contextmanager
def ray_session(address: str | None = None, *, num_cpus: int | None = None) -> Iterator[Any]:
    """The ``ray`` module, initialised; a session this call started is shut down on exit."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    local = address in (None, "local")
    try:
        ray.init(address="local" if local else address, num_cpus=num_cpus if local else None,
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
    except Exception as exc:  # ConnectionError, RuntimeError, ValueError depending on the address
        raise RayUnavailable(f"cannot start or join Ray at {address or 'local'}: "
                             f"{' '.join(str(exc).split())[:200]}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
