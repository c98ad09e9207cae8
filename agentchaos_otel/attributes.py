"""Every span attribute, span name and event name the project reads or writes.

Kept in one module so the GenAI semantic conventions (maintained upstream in
``semantic-conventions-genai``; the constants shipped in ``opentelemetry-semantic-conventions``
are deprecated but the names are unchanged) can be followed in one place, and so that the
ground-truth prefixes that diagnosers must never see are defined exactly once.
"""

from __future__ import annotations

# --- GenAI semantic conventions -------------------------------------------------------------
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_REQUEST_STREAM = "gen_ai.request.stream"
GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
GEN_AI_REQUEST_TEMPERATURE = "gen_ai.request.temperature"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_DESCRIPTION = "gen_ai.tool.description"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"
HTTP_RESPONSE_STATUS_CODE = "http.response.status_code"

OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"
OP_INVOKE_AGENT = "invoke_agent"

PROVIDER_OPENAI = "openai"
PROVIDER_ANTHROPIC = "anthropic"

# Environment switch of the GenAI conventions for recording message content.
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

# Metrics
METRIC_TOKEN_USAGE = "gen_ai.client.token.usage"
METRIC_OPERATION_DURATION = "gen_ai.client.operation.duration"
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"

# --- Ours -------------------------------------------------------------------------------------
STEP = "agentchaos.step"
# One step seen through two instrumentations (an SDK-level span and our HTTP-attempt span under
# it): the inner span names the enclosing one, which counts the attempts it encloses. Views count
# the inner spans as the steps, the enclosing one carries a mirror of their attributes.
STEP_WRAPPER_SPAN_ID = "agentchaos.step.wrapper_span_id"
STEP_WRAPPED_ATTEMPTS = "agentchaos.step.wrapped_attempts"
TASK_ID = "agentchaos.task.id"
CONDITION = "agentchaos.condition"
SEED = "agentchaos.seed"
EPISODE_SUCCESS = "agentchaos.episode.success"
# Marks the root span of an episode (ours, or an application root under zero-code): its role is
# 'agent' whatever other instrumentations write on it (LiteLLM's callback writes
# gen_ai.operation.name=chat onto the current span).
EPISODE_ROOT = "agentchaos.episode.root"
EPISODE_ERROR = "agentchaos.episode.error"
SIMULATED = "agentchaos.simulated"
# Columns of a stored span that were repaired at the store boundary (invalid code points replaced
# by U+FFFD, out-of-range integers clamped) so the span could be stored at all.
STORE_REPAIRED = "agentchaos.store.repaired"

# Ground truth. Diagnosers and predictors must never read anything under these prefixes.
FAULT_PREFIX = "agentchaos.fault."
ORIGINAL_PREFIX = "agentchaos.original."
GROUND_TRUTH_PREFIXES = (FAULT_PREFIX, ORIGINAL_PREFIX)

FAULT_INJECTED = "agentchaos.fault.injected"
FAULT_TYPE = "agentchaos.fault.type"
FAULT_TARGET = "agentchaos.fault.target"
FAULT_EXPERIMENT = "agentchaos.fault.experiment"
FAULT_STRATEGY = "agentchaos.fault.strategy"
FAULT_CHANGED = "agentchaos.fault.changed"
FAULT_DIGEST_BEFORE = "agentchaos.fault.digest_before"
FAULT_DIGEST_AFTER = "agentchaos.fault.digest_after"
FAULT_DETAIL = "agentchaos.fault.detail"
FAULT_SKIPPED = "agentchaos.fault.skipped"  # reason a scheduled firing did not apply

ORIGINAL_FINISH_REASONS = "agentchaos.original.finish_reasons"
ORIGINAL_INPUT_TOKENS = "agentchaos.original.input_tokens"
ORIGINAL_OUTPUT_TOKENS = "agentchaos.original.output_tokens"
ORIGINAL_DIGEST = "agentchaos.original.digest"
ORIGINAL_STATUS_CODE = "agentchaos.original.status_code"

# Observable-derived signals: what the agent saw, reduced to numbers so diagnosis works even
# when message content is not captured.
RESPONSE_STATUS_CODE = "agentchaos.response.status_code"
RESPONSE_CONTENT_LENGTH = "agentchaos.response.content_length"
RESPONSE_TOOL_CALL_COUNT = "agentchaos.response.tool_call_count"
RESPONSE_TOOL_NAMES = "agentchaos.response.tool_names"
RESPONSE_TOOL_ARGS_VALID = "agentchaos.response.tool_args_valid"
RESPONSE_TOOL_ARGS_SCHEMA_VALID = "agentchaos.response.tool_args_schema_valid"
RESPONSE_TOOL_ARGS_DIGEST = "agentchaos.response.tool_args_digest"
RESPONSE_TOOL_ARGS_LENGTH = "agentchaos.response.tool_args_length"
RESPONSE_TOOL_ARGS_ANOMALY = "agentchaos.response.tool_args_unicode_anomaly"
RESPONSE_UNICODE_ANOMALY = "agentchaos.response.unicode_anomaly"
RESPONSE_MOJIBAKE = "agentchaos.response.mojibake"
RESPONSE_ERROR_MARKER = "agentchaos.response.error_marker"
RESPONSE_IS_JSON = "agentchaos.response.content_is_json"
RESPONSE_DIGEST = "agentchaos.response.digest"
RESPONSE_BODY_BYTES = "agentchaos.response.body_bytes"  # as received from the provider, up to any error
RESPONSE_BODY_CHUNKS = "agentchaos.response.body_chunks"  # reads of the body from the provider
RESPONSE_STREAM_CHUNKS = "agentchaos.response.stream_chunks"
RESPONSE_STREAM_DONE = "agentchaos.response.stream_done"
RESPONSE_MAX_CHUNK_GAP_MS = "agentchaos.response.max_chunk_gap_ms"
REQUEST_MESSAGE_COUNT = "agentchaos.request.message_count"
REQUEST_TOOL_COUNT = "agentchaos.request.tool_count"
REQUEST_DIGEST = "agentchaos.request.digest"

TOOL_RESULT_LENGTH = "agentchaos.tool.result_length"
TOOL_RESULT_IS_JSON = "agentchaos.tool.result_is_json"
TOOL_RESULT_IS_ERROR = "agentchaos.tool.result_is_error"
TOOL_RESULT_ERROR_MARKER = "agentchaos.tool.result_error_marker"
TOOL_RESULT_EMPTY = "agentchaos.tool.result_empty"
TOOL_RESULT_KEYS = "agentchaos.tool.result_keys"
# Keys of the records a result carries (the first object of its one list of objects, or of one
# wrapped object): renamed keys inside a listing show only there.
TOOL_RESULT_RECORD_KEYS = "agentchaos.tool.result_record_keys"
TOOL_RESULT_DIGEST = "agentchaos.tool.result_digest"
TOOL_RESULT_NUMERIC_STRINGS = "agentchaos.tool.result_numeric_strings"
TOOL_ARGS_DIGEST = "agentchaos.tool.args_digest"
TOOL_STATE_CHANGED = "agentchaos.tool.state_changed"

LOGPROBS_ENTROPY_MEAN = "agentchaos.logprobs.entropy_mean"
LOGPROBS_ENTROPY_MAX = "agentchaos.logprobs.entropy_max"
LOGPROBS_ENTROPY_LAST = "agentchaos.logprobs.entropy_last"
LOGPROBS_TOP_MASS = "agentchaos.logprobs.top_mass"
LOGPROBS_TOKENS = "agentchaos.logprobs.tokens"

PREDICTOR_SCORE = "agentchaos.predictor.score"
PREDICTOR_ALARM = "agentchaos.predictor.alarm"

# --- Span and event names ---------------------------------------------------------------------
EVENT_INJECTOR_SKIP = "agentchaos.injector.skipped"
# Zero-code: why the AGENTCHAOS_* settings were refused (the application then runs without faults).
INJECTOR_REFUSED = "agentchaos.injector.refused"
EVENT_FAULT_APPLIED = "agentchaos.fault.applied"
# A scheduled response fault that did not fire on a call, with why (``SKIP_REASON``).
EVENT_FAULT_NOT_FIRED = "agentchaos.fault.not_fired"
EVENT_ANNOTATOR_ERROR = "agentchaos.annotator.error"
EVENT_FAILURE_PREDICTED = "failure_predicted"
SKIP_REASON = "agentchaos.skip.reason"


def chat_span_name(model: str | None) -> str:
    return f"{OP_CHAT} {model}" if model else OP_CHAT


def tool_span_name(tool: str) -> str:
    return f"{OP_EXECUTE_TOOL} {tool}"


def agent_span_name(agent: str) -> str:
    return f"{OP_INVOKE_AGENT} {agent}"


def is_ground_truth(key: str) -> bool:
    return key.startswith(GROUND_TRUTH_PREFIXES)

# --- diagnosers ---------------------------------------------------------------------------------
# Every error-like form found in the text (the single RESPONSE_ERROR_MARKER keeps only the first),
# so a diagnoser can tell a provider error body that mentions a rate limit from a plain one.
RESPONSE_ERROR_MARKERS = "agentchaos.response.error_markers"
# Tool calls whose arguments are an empty object: a call with nothing to act on.
RESPONSE_TOOL_ARGS_EMPTY = "agentchaos.response.tool_args_empty"
# First way the arguments break the declared schema (unknown_key, missing_required, wrong_type,
# enum, empty_value, invalid_json, unknown_tool) or '' when they fit.
RESPONSE_TOOL_ARGS_PROBLEM = "agentchaos.response.tool_args_problem"
# Tool-result shape: structure without values, so results of one tool can be compared.
TOOL_RESULT_ERROR_MARKERS = "agentchaos.tool.result_error_markers"
TOOL_RESULT_JSON_LIKE = "agentchaos.tool.result_json_like"
TOOL_RESULT_SHAPE_DIGEST = "agentchaos.tool.result_shape_digest"
TOOL_RESULT_KEY_COUNT = "agentchaos.tool.result_key_count"
TOOL_RESULT_ITEM_COUNT = "agentchaos.tool.result_item_count"
TOOL_RESULT_STATUS = "agentchaos.tool.result_status"
# Identifier/date keys the result echoes back with a value other than the one in the call's
# arguments (signals.echo_mismatches): an API answering about a different entity than asked.
TOOL_RESULT_ECHO_MISMATCH = "agentchaos.tool.result_echo_mismatch"
# The count member (``total``, ``meta.count``) of a result with one list that says more items
# exist than the list holds (vocabulary.count_above_items); set only when there is one. Beside
# data of the result's own it is a cut only for a tool that never answers so (diagnosers/norms.py).
TOOL_RESULT_COUNT_ABOVE = "agentchaos.tool.result_count_above"
# OpenInference names, read when a trace was recorded by an OpenInference instrumentation
# (Phoenix/Arize) rather than ours, so the same diagnosis works on those traces.
OI_SPAN_KIND = "openinference.span.kind"
OI_OUTPUT_VALUE = "output.value"
OI_INPUT_VALUE = "input.value"
OI_LLM_FINISH_REASON = "llm.finish_reason"
OI_LLM_TOKEN_COUNT_COMPLETION = "llm.token_count.completion"
OI_LLM_TOKEN_COUNT_PROMPT = "llm.token_count.prompt"
OI_LLM_OUTPUT_MESSAGES_PREFIX = "llm.output_messages."
OI_LLM_MODEL_NAME = "llm.model_name"
OI_TOOL_NAME = "tool.name"
OI_TOOL_DESCRIPTION = "tool.description"
# --- trace store (DuckDB) -----------------------------------------------------------------------
# Span classes the store views recognise. Other GenAI operations that produce text count as LLM
# calls; OpenInference span kinds are upper-case values of OI_SPAN_KIND.
OP_TEXT_COMPLETION = "text_completion"
OP_GENERATE_CONTENT = "generate_content"
LLM_OPERATIONS = (OP_CHAT, OP_TEXT_COMPLETION, OP_GENERATE_CONTENT)
OI_KIND_LLM = "LLM"
OI_KIND_TOOL = "TOOL"
OI_KIND_AGENT = "AGENT"
# OpenLLMetry (traceloop) marks its LLM spans with this; values chat / completion.
LLM_REQUEST_TYPE = "llm.request.type"
LLM_REQUEST_TYPES = ("chat", "completion")
# Fallback names seen in traces from other instrumentations (older GenAI conventions, OpenInference).
GEN_AI_SYSTEM = "gen_ai.system"
OI_LLM_PROVIDER = "llm.provider"
OI_LLM_SYSTEM = "llm.system"
OI_TOOL_CALL_ID = "tool_call.id"
OI_AGENT_NAME = "agent.name"
# Resource and exception names from the general OTel conventions.
SERVICE_NAME = "service.name"
EXCEPTION_TYPE = "exception.type"
EXCEPTION_MESSAGE = "exception.message"
EXCEPTION_STACKTRACE = "exception.stacktrace"
# Credential header names, and every other redaction rule, live in agentchaos_otel/redact.py.

# --- predictors (failure prediction) ---------------------------------------------------------
PREDICTOR_THRESHOLD = "agentchaos.predictor.threshold"
PREDICTOR_FEATURE_SET = "agentchaos.predictor.feature_set"
PREDICTOR_STEP = "agentchaos.predictor.step"  # last step of the prefix a score was computed on


# tool results
ORIGINAL_TOOL_RESULT = "agentchaos.original.tool_result"  # what the tool really returned (content capture only)
TOOL_CALL_INDEX = "agentchaos.tool.call_index"  # 0-based order of tool calls within the episode
TARGET_TOOL_RESULT = "tool_result"  # value of agentchaos.fault.target for tool-result faults

# --- campaign (runner and robustness report) -------------------------------------------------
# On an episode root: run_one raised, so the harness (not the agent's own error handling) ended
# it. Kept apart from EPISODE_ERROR, which also records errors the agent met and survived.
EPISODE_CRASHED = "agentchaos.episode.crashed"

# --- argument grounding (LLM spans) ---------------------------------------------------------
# How many string argument values of the response's tool calls appear nowhere in the request's
# messages: an agent that calls a tool with an entity nobody mentioned was probably misled.
RESPONSE_TOOL_ARGS_UNGROUNDED = "agentchaos.response.tool_args_ungrounded"
RESPONSE_TOOL_ARGS_STRINGS = "agentchaos.response.tool_args_strings"

# --- diagnosers (observable reply signals) ---------------------------------------------------
# The reply text is non-empty but only whitespace: to a reader, an empty answer.
RESPONSE_CONTENT_BLANK = "agentchaos.response.content_blank"

# --- import (``agentchaos traces import``) -----------------------------------------------------
# On the root span of an episode built from a saved message list (not on imported OTLP spans,
# which are stored as they were): the format it came from, the file, and whether the span times
# were made up because the trajectory carried none (then durations say nothing about latency).
IMPORT_FORMAT = "agentchaos.import.format"
IMPORT_SOURCE = "agentchaos.import.source"
IMPORT_SYNTHETIC_TIMING = "agentchaos.import.synthetic_timing"

# --- verdicts on spans (``agentchaos traces export``, ``configure(diagnose_live=True)``) ---------
# A diagnosis as a span event on the step it blames, and as attributes on that span and on the
# episode root (the root names the blamed span and step), so Jaeger / Tempo / Phoenix users can
# search for root causes.
EVENT_DIAGNOSIS = "agentchaos.diagnosis"
DIAGNOSIS_PREFIX = "agentchaos.diagnosis."
DIAGNOSIS_TYPE = "agentchaos.diagnosis.type"
DIAGNOSIS_CONFIDENCE = "agentchaos.diagnosis.confidence"
DIAGNOSIS_METHOD = "agentchaos.diagnosis.method"
DIAGNOSIS_EVIDENCE = "agentchaos.diagnosis.evidence"
DIAGNOSIS_TARGET = "agentchaos.diagnosis.target"
DIAGNOSIS_STEP = "agentchaos.diagnosis.step"
DIAGNOSIS_SPAN_ID = "agentchaos.diagnosis.span_id"
DIAGNOSIS_RULE = "agentchaos.diagnosis.rule"
DIAGNOSIS_LIVE = "agentchaos.diagnosis.live"
# What Phoenix (OpenInference) reads from an exported span: the project a trace lands in (resource
# attribute) and the session it belongs to; the GenAI conventions' name for a session.
OI_PROJECT_NAME = "openinference.project.name"
OI_SESSION_ID = "session.id"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
# Predictions replayed by export use the live predictor's names (PREDICTOR_*, EVENT_FAILURE_PREDICTED)
# plus the model they came from.
PREDICTOR_MODEL = "agentchaos.predictor.model"

# --- metrics (``configure(metrics=...)``) -------------------------------------------------------
METRIC_FAULTS_INJECTED = "agentchaos.faults.injected"
METRIC_EPISODES = "agentchaos.episodes"
METRIC_DIAGNOSES = "agentchaos.diagnoses"
# Metric attribute keys (short, so Prometheus labels read well: agentchaos_faults_injected{type=...}).
METRIC_ATTR_TYPE = "type"
METRIC_ATTR_TARGET = "target"
METRIC_ATTR_CHANGED = "changed"
METRIC_ATTR_OUTCOME = "outcome"
METRIC_ATTR_CONDITION = "condition"
METRIC_ATTR_METHOD = "method"

# --- guards (agentchaos_otel.guards) ---------------------------------------------------------
# Response guard, on the chat span of each checked response (one span per attempt).
GUARD_PREFIX = "agentchaos.guard."
GUARD_CHECKED = "agentchaos.guard.checked"  # the response was checked (False: see GUARD_SKIPPED)
GUARD_SKIPPED = "agentchaos.guard.skipped"  # why a response was not checked (stream, status, not JSON)
GUARD_FINDINGS = "agentchaos.guard.findings"  # kinds found, e.g. ["length", "schema_mismatch"]
GUARD_DETAIL = "agentchaos.guard.detail"  # first finding, one line
GUARD_ACTION = "agentchaos.guard.action"  # pass | raise | retry | annotate
GUARD_POLICY = "agentchaos.guard.policy"  # raise | retry | annotate
GUARD_ATTEMPT = "agentchaos.guard.attempt"  # 0 = the agent's own call, 1.. = guard retries
GUARD_BACKOFF = "agentchaos.guard.backoff_s"  # wait before the retry this decision asked for
EVENT_GUARD_DECISION = "agentchaos.guard.decision"  # when no chat span of ours is there to carry it
# Idempotency guard, on execute_tool spans.
GUARD_IDEMPOTENT = "agentchaos.guard.idempotent"  # the tool was declared idempotent
GUARD_SUPPRESSED = "agentchaos.guard.suppressed"  # this repeat was not executed
GUARD_SUPPRESSED_OF = "agentchaos.guard.suppressed_of"  # guard sequence number of the execution it repeats
GUARD_REPLY = "agentchaos.guard.reply"  # first_result | already_applied
EVENT_GUARD_SUPPRESSED = "agentchaos.guard.suppressed"
# On an episode root: which guards ran, and how often a state-changing call took effect twice
# (counted on the official checker's replayed state for BFCL). The count comes from evaluation,
# not from anything the agent could observe, so it is ground truth: under the fault prefix,
# which blinding removes before a diagnoser sees the episode.
EPISODE_GUARDS = "agentchaos.guard.enabled"
EPISODE_DOUBLE_APPLIED = "agentchaos.fault.double_applied"

# Observable forms of failure that real providers, gateways and tools produce (issue: diagnosis
# generality). Content-free: counts, flags and short codes only.
REQUEST_RESPONSE_FORMAT = "agentchaos.request.response_format"  # text / json_object / json_schema
REQUEST_ASKS_JSON = "agentchaos.request.asks_json"  # a system or user message asks for JSON
RESPONSE_REPLACEMENT_CHARS = "agentchaos.response.replacement_chars"  # U+FFFD in reply text
RESPONSE_JSON_EMBEDDED = "agentchaos.response.json_embedded"  # JSON inside a fence or prose
RESPONSE_BODY_ERROR = "agentchaos.response.body_error"  # an error object in a 2xx body
RESPONSE_CHOICE_COUNT = "agentchaos.response.choice_count"  # -1: no `choices` member at all
RESPONSE_MESSAGE_NULL = "agentchaos.response.message_null"  # choices[0].message is null
RESPONSE_ERROR_CODE = "agentchaos.response.error_code"  # provider error code/type of an error body
RESPONSE_REFUSAL = "agentchaos.response.refusal"  # choices[0].message.refusal is set
TOOL_RESULT_FAILURE = "agentchaos.tool.result_failure"  # what a failed or partial result means (vocabulary)
# What a result, reply or response reports about itself, read with the published error vocabulary
# (agentchaos_otel/vocabulary) at span time, so a diagnosis rests on the same meaning whether
# message content is captured or not. Meanings: rate_limit, content_filter, timeout, connection,
# auth, not_found, invalid_request, length, partial, error. Evidence: "<form> <row>", the shape the
# failure was recognised by and the published code it rests on ("error_member grpc:DEADLINE_EXCEEDED").
TOOL_RESULT_FAILURE_EVIDENCE = "agentchaos.tool.result_failure_evidence"
RESPONSE_FAILURE = "agentchaos.response.failure"  # a 2xx body's error member or block, or an error body's meaning
RESPONSE_FAILURE_EVIDENCE = "agentchaos.response.failure_evidence"
RESPONSE_CONTENT_FAILURE = "agentchaos.response.content_failure"  # the reply text (or JSON) is an error report
RESPONSE_CONTENT_FAILURE_EVIDENCE = "agentchaos.response.content_failure_evidence"
# String argument values (3+ characters) that the conversation contains only as the start of a
# longer word ("Lis" for "Lisbon"): values cut short on the way, not invented ones.
RESPONSE_TOOL_ARGS_CUT_VALUES = "agentchaos.response.tool_args_cut_values"
RESPONSE_TOOL_ARGS_SHORT_CUT_VALUES = "agentchaos.response.tool_args_short_cut_values"  # ... of 1-2 characters
RESPONSE_TOOL_ARGS_MOJIBAKE = "agentchaos.response.tool_args_mojibake"  # UTF-8 read as Latin-1/cp1252 in arguments

# --- MCP (OTel MCP semantic conventions; agentchaos_otel/mcp) ----------------------------------
MCP_METHOD_NAME = "mcp.method.name"
MCP_SESSION_ID = "mcp.session.id"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_RESOURCE_URI = "mcp.resource.uri"
GEN_AI_PROMPT_NAME = "gen_ai.prompt.name"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"
MCP_TOOLS_CALL = "tools/call"
MCP_TOOLS_LIST = "tools/list"
MCP_INITIALIZE = "initialize"
MCP_PROMPTS_GET = "prompts/get"
TRANSPORT_PIPE = "pipe"  # stdio
TRANSPORT_TCP = "tcp"  # Streamable HTTP, SSE
ERROR_TYPE_TOOL_ERROR = "tool_error"  # error.type of a CallToolResult with isError set
# The tool's own annotations from tools/list, as the server declared them (only those it declared).
MCP_TOOL_READ_ONLY = "agentchaos.mcp.tool.read_only"
MCP_TOOL_DESTRUCTIVE = "agentchaos.mcp.tool.destructive"
MCP_TOOL_IDEMPOTENT = "agentchaos.mcp.tool.idempotent"
MCP_TOOL_OPEN_WORLD = "agentchaos.mcp.tool.open_world"
# agentchaos.fault.target of faults injected at the MCP protocol (JSON-RPC errors, HTTP 429/503,
# a cut event stream, a stalled stdio server) rather than into the tool's result.
TARGET_MCP = "mcp"


def mcp_span_name(method: str, target: str | None = None) -> str:
    """``{mcp.method.name} {target}`` (tool or prompt name) as the MCP conventions name client spans."""
    return f"{method} {target}" if target else method
