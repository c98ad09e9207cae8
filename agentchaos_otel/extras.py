"""Which optional dependency belongs to which extra, and the one line that says how to install it.

``pip install agentchaos-otel`` installs what runs inside an agent's process (tracing, the
injector, the DuckDB store, receivers, the command line); analysis, the openai SDK, gRPC,
Prometheus, Ray and MCP come with extras (pyproject.toml, docs/install.md). Code that needs one of
them imports it where it is used; when it is missing, ``missing_line`` turns the
``ModuleNotFoundError`` into one line naming the package and the extra (the command line prints it
for every command), and ``require`` raises that line where a library call needs the package.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from agentchaos_otel.errors import UserError

PROJECT = "agentchaos-otel"

# Import name (or the start of one) -> (distribution, extra). Longest match wins.
OPTIONAL: dict[str, tuple[str, str]] = {
    "sklearn": ("scikit-learn", "analysis"),
    "scipy": ("scipy", "analysis"),
    "polars": ("polars", "analysis"),
    "matplotlib": ("matplotlib", "analysis"),
    "skops": ("skops", "analysis"),
    "openai": ("openai", "demo"),
    "jsonschema": ("jsonschema", "guards"),
    "grpc": ("grpcio", "grpc"),
    "opentelemetry.exporter.otlp.proto.grpc": ("opentelemetry-exporter-otlp-proto-grpc", "grpc"),
    "opentelemetry.exporter.prometheus": ("opentelemetry-exporter-prometheus", "prometheus"),
    "prometheus_client": ("prometheus-client", "prometheus"),
    "ray": ("ray", "ray"),
    "mcp": ("mcp", "mcp"),
}


class ExtraMissing(UserError, ImportError):
    """An optional dependency is not installed; the message says which extra brings it."""


def extra_for(module: str) -> tuple[str, str] | None:
    """(distribution, extra) of an import name, or None when no extra brings it."""
    for prefix in sorted(OPTIONAL, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return OPTIONAL[prefix]
    return None


def install_line(extra: str) -> str:
    return f"pip install '{PROJECT}[{extra}]'"


def missing_line(exc: BaseException, feature: str = "this") -> str | None:
    """The one line for a ``ModuleNotFoundError`` of an optional dependency; None for any other error."""
    name = getattr(exc, "name", None)
    if not isinstance(exc, ModuleNotFoundError) or not name:
        return None
    found = extra_for(name)
    if found is None:
        return None
    dist, extra = found
    return f"{feature} needs {dist}, which is not installed: {install_line(extra)}"


def require(module: str, feature: str) -> ModuleType:
    """Import ``module``; ``ExtraMissing`` naming its extra when it is not installed."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        line = missing_line(exc, feature)
        if line is None:
            raise
        raise ExtraMissing(line) from None
