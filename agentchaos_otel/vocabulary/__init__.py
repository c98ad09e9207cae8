"""What failures mean, read the way the systems that produce them publish it.

``errors.toml`` holds the published vocabulary (HTTP statuses, gRPC codes, errno, exception
classes, SQLSTATE, cloud and orchestrator reasons, SOAP faults, JSON-RPC/MCP codes, provider
finish reasons), one row per code with its source; ``table`` indexes it; ``read`` recognises an
error by its structure and reads its meaning from the codes inside. The core's signal functions
call these at span time, so diagnoses rest on the same meaning whether message content is
captured or not. Nothing here imports the rest of the package.
"""

from agentchaos_otel.vocabulary.read import (
    NOTHING,
    Reading,
    code_meaning,
    count_above_items,
    finish_reason_meaning,
    http_status_meaning,
    listing_key,
    method_kind,
    read_exception,
    read_exception_names,
    read_flagged_text,
    read_result,
    read_text,
    read_value,
)
from agentchaos_otel.vocabulary.table import GENERIC, MEANINGS, Hit, load

__all__ = ["GENERIC", "MEANINGS", "NOTHING", "Hit", "Reading", "code_meaning", "count_above_items",
           "finish_reason_meaning", "http_status_meaning", "listing_key", "load", "method_kind", "read_exception",
           "read_exception_names", "read_flagged_text", "read_result", "read_text", "read_value"]
