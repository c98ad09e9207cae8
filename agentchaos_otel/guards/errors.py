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

On an Anthropic Messages call (and when the ``anthropic`` SDK is installed) the exception raised
is also an ``anthropic.APIResponseValidationError``: that SDK likewise passes its own errors
through untouched, so ``except guards.LengthStop`` and ``except anthropic.APIError`` both work.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import openai

from agentchaos_otel.guards import checks as C


class GuardError(openai.APIResponseValidationError):
    """A response that arrived with a success status but fails a guard check."""

    kind = "guard"

    def __init__(self, findings: Sequence[C.Finding], response: Any, body: Any, *, attempts: int = 1) -> None:
        self.findings = list(findings)
        self.attempts = attempts
        super().__init__(response, body, message=_message(self.findings, attempts))


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


@functools.cache
def _anthropic_variant(cls: type[GuardError]) -> type[GuardError] | None:
    """``cls`` that is also ``anthropic.APIResponseValidationError`` (None without that SDK).

    Both SDKs' exception constructors end in ``super().__init__(message)``, which in a class
    deriving from both would call the other SDK's constructor with the wrong arguments; so the
    variant sets the attributes both documents and initialises ``Exception`` directly.
    """
    try:
        import anthropic
    except ImportError:
        return None

    def __init__(self: Any, findings: Sequence[C.Finding], response: Any, body: Any, *, attempts: int = 1) -> None:
        self.findings = list(findings)
        self.attempts = attempts
        message = _message(self.findings, attempts)
        Exception.__init__(self, message)
        self.message, self.request, self.body, self.response = message, response.request, body, response
        self.status_code = response.status_code
        self.code = self.param = None
        self.type = body.get("type") if isinstance(body, dict) else None
        self.request_id = response.headers.get("request-id")

    return type(cls.__name__, (cls, anthropic.APIResponseValidationError),
                {"__init__": __init__, "__module__": __name__, "__doc__": cls.__doc__})


def _message(findings: Sequence[C.Finding], attempts: int) -> str:
    lead = C.first(findings)
    return (lead.line() if lead else "guard check failed") + \
        (f" (+{len(findings) - 1} more)" if len(findings) > 1 else "") + \
        (f" after {attempts} attempts" if attempts > 1 else "")


def error_for(findings: Sequence[C.Finding], response: Any, body: Any, *, attempts: int = 1,
              provider: str = "openai") -> GuardError:
    lead = C.first(findings)
    cls = ERROR_BY_KIND.get(lead.kind, GuardError) if lead else GuardError
    sdk_variant = _SDK_VARIANTS.get(provider)
    variant = sdk_variant(cls) if sdk_variant is not None else None
    return (variant or cls)(findings, response, body, attempts=attempts)


# The error classes as the provider's own SDK raises them; GuardError already derives from
# ``openai.APIResponseValidationError``, so only Anthropic needs a variant.
_SDK_VARIANTS: dict[str, Callable[[type[GuardError]], type[GuardError] | None]] = {"anthropic": _anthropic_variant}
