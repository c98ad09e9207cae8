"""The exceptions a guarded call raises, one class per kind of finding.

``GuardError`` subclasses ``openai.APIResponseValidationError``: the official ``openai`` SDK
passes any ``OpenAIError`` raised by its transport through unchanged (no retry, no wrapping in
``APIConnectionError``), so agents that already catch ``openai.APIError`` keep working and
those that want to react to a bad answer catch the subclass::

    GuardError(openai.APIResponseValidationError)
    +-- LengthStop          finish_reason 'length' / stop_reason 'max_tokens'
    +-- ContentFiltered     finish_reason 'content_filter' / refusal
    +-- EmptyAnswer         no content and no tool calls
    +-- InvalidArguments    tool-call arguments are not a JSON object
    +-- SchemaMismatch      arguments do not fit the tool's JSON Schema (or the tool was not offered)
    +-- FormatMismatch      the answer does not match the requested response_format

Every instance carries ``findings`` (all of them, the first names the class), ``attempts``
(responses the guard saw, retries included), and the SDK's ``response``/``body``/``request``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import openai

from agentchaos_otel.guards import checks as C


class GuardError(openai.APIResponseValidationError):
    """A response that arrived with a success status but fails a guard check."""

    kind = "guard"

    def __init__(self, findings: Sequence[C.Finding], response: Any, body: Any, *, attempts: int = 1) -> None:
        self.findings = list(findings)
        self.attempts = attempts
        lead = C.first(self.findings)
        message = (lead.line() if lead else "guard check failed") + \
            (f" (+{len(self.findings) - 1} more)" if len(self.findings) > 1 else "") + \
            (f" after {attempts} attempts" if attempts > 1 else "")
        super().__init__(response, body, message=message)


class LengthStop(GuardError):
    kind = C.LENGTH


class ContentFiltered(GuardError):
    kind = C.CONTENT_FILTER


class EmptyAnswer(GuardError):
    kind = C.EMPTY_ANSWER


class InvalidArguments(GuardError):
    kind = C.INVALID_ARGUMENTS


class SchemaMismatch(GuardError):
    kind = C.SCHEMA_MISMATCH


class FormatMismatch(GuardError):
    kind = C.FORMAT_MISMATCH


ERROR_BY_KIND: dict[str, type[GuardError]] = {
    cls.kind: cls for cls in (LengthStop, ContentFiltered, EmptyAnswer, InvalidArguments, SchemaMismatch,
                              FormatMismatch)
}


def error_for(findings: Sequence[C.Finding], response: Any, body: Any, *, attempts: int = 1) -> GuardError:
    lead = C.first(findings)
    cls = ERROR_BY_KIND.get(lead.kind, GuardError) if lead else GuardError
    return cls(findings, response, body, attempts=attempts)
