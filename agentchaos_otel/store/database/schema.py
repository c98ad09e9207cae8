"""Layout of traces.duckdb: the raw `spans` table, its version record, and the views over it.

Only raw spans are stored; everything analysis reads (LLM calls, tool calls, steps, episodes,
ground truth) is a view, so fixing a view fixes every existing file. View SQL is generated from
the names in `attributes.py` so the store and the span writers cannot drift apart; GenAI,
OpenInference and OpenLLMetry names of the same fact are coalesced in the precedence
``trace/foreign.py`` gives them, the mapping the diagnosers' per-step observations use too.

Whoever traced it, one HTTP attempt is one LLM call (``trace/processors.py`` explains the
pairing, which does not depend on parenthood): a span the processor paired with ours as the same
step (named by our span's ``agentchaos.step.wrapper_span_id``, or counting
``agentchaos.step.wrapped_attempts``), and, for traces recorded without our processor, an LLM
span directly enclosing another LLM span, is a *wrapper*, another instrumentation's view of the
same step, and is left out of ``steps``, ``llm_calls``, ``tool_calls``, the episode counts and
``injected_faults``. A foreign LLM span with nothing paired is itself the call; a tool run
inside another tool is a step of its own, as is the tool around it.

A span's role is read from its final attributes; a step's number is its rank by start time
(then span id) among its trace's steps, so numbers are unique and in the order things happened,
even for spans whose attributes came after they started.

Episodes are the roots marked ``agentchaos.episode.root`` (ours, and application roots under
zero-code) and other ``invoke_agent`` roots, whatever other instrumentations wrote on them; a
trace without one is one episode too, rooted at its root span when that span is not itself a
step. An episode's outcome is ``agentchaos.episode.success``, else its root's status (OK or
ERROR, as the application set it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import duckdb

from agentchaos_otel import attributes as A
from agentchaos_otel.trace import foreign

SCHEMA_VERSION = 2
STORE_APP = "agentchaos-otel"

# Column order used by the exporter, the spool and the OTLP receiver.
SPAN_COLUMNS: tuple[str, ...] = (
    "trace_id", "span_id", "parent_span_id", "name", "kind", "start_ns", "end_ns", "status_code",
    "status_message", "service_name", "scope_name", "attributes", "resource", "events", "exported_ns",
)
SPAN_INT_COLUMNS: tuple[str, ...] = ("start_ns", "end_ns", "exported_ns")  # BIGINT; the rest is text

SPANS_DDL = """
CREATE TABLE IF NOT EXISTS spans (
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    parent_span_id VARCHAR,
    name VARCHAR,
    kind VARCHAR,
    start_ns BIGINT,
    end_ns BIGINT,
    status_code VARCHAR,
    status_message VARCHAR,
    service_name VARCHAR,
    scope_name VARCHAR,
    attributes JSON,
    resource JSON,
    events JSON,
    exported_ns BIGINT,
    PRIMARY KEY (trace_id, span_id)
)
"""

VERSION_DDL = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL,
    app VARCHAR NOT NULL,
    views_digest VARCHAR,
    updated_ns BIGINT
)
"""


def _add_exported_ns(conn: duckdb.DuckDBPyConnection) -> None:
    # Version 2: first-export time per span, so a live reader can fetch only spans that are new
    # since its last poll (re-exports keep the first value because inserts never overwrite).
    conn.execute("ALTER TABLE spans ADD COLUMN IF NOT EXISTS exported_ns BIGINT")


# MIGRATIONS[v] upgrades a file from version v to v + 1.
MIGRATIONS: dict[int, Callable[[duckdb.DuckDBPyConnection], None]] = {1: _add_exported_ns}


# --- SQL fragments over the JSON attribute column ---------------------------------------------

def jpath(key: str) -> str:
    """A JSON path literal for one attribute name (names hold dots, so the name is quoted)."""
    if "'" in key or '"' in key:
        raise ValueError(f"attribute name cannot be used in a JSON path: {key!r}")
    return f"'$.\"{key}\"'"


def _str(*keys: str, col: str = "attributes") -> str:
    parts = [f"json_extract_string({col}, {jpath(k)})" for k in keys]
    return parts[0] if len(parts) == 1 else f"COALESCE({', '.join(parts)})"


def _int(*keys: str, col: str = "attributes") -> str:
    parts = []
    for k in keys:
        s = _str(k, col=col)
        parts.append(f"COALESCE(TRY_CAST({s} AS BIGINT), TRY_CAST(TRY_CAST({s} AS DOUBLE) AS BIGINT))")
    return parts[0] if len(parts) == 1 else f"COALESCE({', '.join(parts)})"


def _dbl(key: str, col: str = "attributes") -> str:
    return f"TRY_CAST({_str(key, col=col)} AS DOUBLE)"


def _bool(key: str, col: str = "attributes") -> str:
    return f"TRY_CAST({_str(key, col=col)} AS BOOLEAN)"


def _str_list(*keys: str, col: str = "attributes") -> str:
    """A string[] attribute, also accepting a single string (OpenInference finish reason)."""
    parts = []
    for k in keys:
        p = jpath(k)
        parts.append(
            f"CASE WHEN json_type({col}, {p}) = 'ARRAY' "
            f"THEN from_json(json_extract({col}, {p}), '[\"VARCHAR\"]') "
            f"WHEN json_type({col}, {p}) NOT IN ('NULL', 'OBJECT') "
            f"THEN [json_extract_string({col}, {p})] END"
        )
    return parts[0] if len(parts) == 1 else f"COALESCE({', '.join(parts)})"


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


# Attributes that the views read on every span (role, step, task, wrapper, ground truth). They are
# taken from one parse of the attribute JSON in ``span_roles`` (a list of paths is one parse,
# where each json_extract_string would parse the text again) and carried as ``a_*`` columns.
_SPAN_KEYS: tuple[str, ...] = (
    A.GEN_AI_OPERATION_NAME, A.OI_SPAN_KIND, A.LLM_REQUEST_TYPE, A.TASK_ID, A.STEP, A.STEP_WRAPPER_SPAN_ID,
    A.ERROR_TYPE, A.FAULT_INJECTED, A.FAULT_TYPE, A.FAULT_TARGET, A.FAULT_EXPERIMENT, A.FAULT_CHANGED,
    A.SIMULATED, A.MCP_METHOD_NAME, A.EPISODE_ROOT, A.STEP_WRAPPED_ATTEMPTS,
)


def _key(key: str) -> str:
    """The value of one of ``_SPAN_KEYS`` as json_extract_string gives it, from the parsed list."""
    return f"_a[{_SPAN_KEYS.index(key) + 1}]"


def _as_int(value: str) -> str:
    return f"COALESCE(TRY_CAST({value} AS BIGINT), TRY_CAST(TRY_CAST({value} AS DOUBLE) AS BIGINT))"


def _view_sql() -> dict[str, str]:
    op = _key(A.GEN_AI_OPERATION_NAME)
    oi_kind = f"upper({_key(A.OI_SPAN_KIND)})"
    role = (  # trace/kinds.py: the MCP server's side of a request is no step of the agent
        f"CASE WHEN s.kind = 'SERVER' AND {_key(A.MCP_METHOD_NAME)} IS NOT NULL THEN NULL "
        f"WHEN TRY_CAST({_key(A.EPISODE_ROOT)} AS BOOLEAN) THEN 'agent' "
        f"WHEN {op} IN {_in(A.LLM_OPERATIONS)} OR {oi_kind} = '{A.OI_KIND_LLM}' "
        f"OR {_key(A.LLM_REQUEST_TYPE)} IN {_in(A.LLM_REQUEST_TYPES)} THEN 'llm' "
        f"WHEN {op} = '{A.OP_EXECUTE_TOOL}' OR {oi_kind} = '{A.OI_KIND_TOOL}' THEN 'tool' "
        f"WHEN {op} = '{A.OP_INVOKE_AGENT}' OR {oi_kind} = '{A.OI_KIND_AGENT}' THEN 'agent' END"
    )
    exc_type = (f"list_filter(json_extract_string(events, '$[*].attributes.\"{A.EXCEPTION_TYPE}\"'), "
                f"lambda x: x IS NOT NULL)[1]")
    error_type = f"COALESCE(r.a_error_type, CASE WHEN r.status_code = 'ERROR' THEN {exc_type} END)"
    paths = ", ".join(jpath(k) for k in _SPAN_KEYS)
    views: dict[str, str] = {}

    # Every span with its role and the attributes every view reads; the base of all other views.
    views["span_roles"] = f"""
SELECT s.* EXCLUDE (_a), {role} AS role,
       {_key(A.TASK_ID)} AS a_task_id,
       {_as_int(_key(A.STEP))} AS a_step,
       {_key(A.STEP_WRAPPER_SPAN_ID)} AS a_wrapper_span_id,
       {_as_int(_key(A.STEP_WRAPPED_ATTEMPTS))} AS a_wrapped_attempts,
       {_key(A.ERROR_TYPE)} AS a_error_type,
       TRY_CAST({_key(A.FAULT_INJECTED)} AS BOOLEAN) AS a_fault_injected,
       {_key(A.FAULT_TYPE)} AS a_fault_type,
       {_key(A.FAULT_TARGET)} AS a_fault_target,
       {_key(A.FAULT_EXPERIMENT)} AS a_fault_experiment,
       TRY_CAST({_key(A.FAULT_CHANGED)} AS BOOLEAN) AS a_fault_changed,
       TRY_CAST({_key(A.SIMULATED)} AS BOOLEAN) AS a_simulated
FROM (SELECT *, json_extract_string(attributes, [{paths}]) AS _a FROM spans) s
"""

    # Another instrumentation's span around one of our steps (see the module docstring).
    # Two equi-joins rather than one join on an OR, so DuckDB hashes instead of comparing pairs.
    views["wrapper_spans"] = """
SELECT p.trace_id, p.span_id
FROM span_roles p JOIN span_roles c
  ON c.trace_id = p.trace_id AND c.parent_span_id = p.span_id AND c.role = p.role
WHERE p.role = 'llm'
UNION
SELECT c.trace_id, c.a_wrapper_span_id AS span_id
FROM span_roles c
WHERE c.role IN ('llm', 'tool') AND c.a_wrapper_span_id IS NOT NULL
UNION
SELECT p.trace_id, p.span_id
FROM span_roles p
WHERE p.role IN ('llm', 'tool') AND p.a_wrapped_attempts > 0
"""

    # Spans whose parent is not in the trace.
    views["trace_roots"] = """
SELECT r.* FROM span_roles r
WHERE r.parent_span_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM spans p WHERE p.trace_id = r.trace_id AND p.span_id = r.parent_span_id)
"""

    # Episode roots: agent spans that are trace roots (nested sub-agents are not roots); in a trace
    # without one that has steps, its root span if that is no step itself (zero-code episodes).
    views["agent_roots"] = """
SELECT r.*, r.a_task_id AS task_id FROM trace_roots r WHERE r.role = 'agent'
UNION ALL
SELECT r.*, r.a_task_id AS task_id FROM trace_roots r
WHERE r.role IS NULL
  AND NOT EXISTS (SELECT 1 FROM trace_roots a WHERE a.trace_id = r.trace_id AND a.role = 'agent')
  AND EXISTS (SELECT 1 FROM span_roles s WHERE s.trace_id = r.trace_id AND s.role IN ('llm', 'tool'))
"""

    # LLM and tool spans with their step number and common columns.
    views["step_spans"] = f"""
SELECT r.trace_id, r.span_id, r.parent_span_id,
       COALESCE(r.a_task_id, root.task_id) AS task_id,
       row_number() OVER (PARTITION BY r.trace_id ORDER BY r.start_ns, r.span_id) - 1 AS step,
       r.role AS kind, r.name, r.start_ns, r.end_ns,
       (r.end_ns - r.start_ns) / 1e6 AS duration_ms,
       r.status_code, r.status_message,
       {error_type} AS error_type,
       COALESCE(r.a_fault_injected, FALSE) AS fault_injected,
       r.a_fault_type AS fault_type,
       r.a_fault_target AS fault_target,
       r.a_fault_experiment AS fault_experiment,
       r.a_fault_changed AS fault_changed,
       r.a_simulated AS simulated,
       r.attributes, r.events
FROM span_roles r
LEFT JOIN (SELECT trace_id, min(task_id) AS task_id FROM agent_roots GROUP BY trace_id) root
       ON root.trace_id = r.trace_id
WHERE r.role IN ('llm', 'tool')
  AND NOT EXISTS (SELECT 1 FROM wrapper_spans w WHERE w.trace_id = r.trace_id AND w.span_id = r.span_id)
"""

    views["steps"] = """
SELECT trace_id, span_id, task_id, step, kind, name, start_ns, end_ns, duration_ms, status_code,
       error_type, fault_injected, fault_type, fault_target, fault_changed, attributes, events
FROM step_spans
"""

    views["llm_calls"] = f"""
SELECT trace_id, span_id, parent_span_id, task_id, step, name, start_ns, end_ns, duration_ms,
       status_code, error_type,
       {_str(*foreign.PROVIDER)} AS provider,
       {_str(*foreign.REQUEST_MODEL)} AS request_model,
       {_str(*foreign.RESPONSE_MODEL)} AS response_model,
       {_str(A.GEN_AI_RESPONSE_ID)} AS response_id,
       {_bool(A.GEN_AI_REQUEST_STREAM)} AS stream,
       {_str_list(*foreign.FINISH_REASONS)} AS finish_reasons,
       {_int(*foreign.INPUT_TOKENS)} AS input_tokens,
       {_int(*foreign.OUTPUT_TOKENS)} AS output_tokens,
       {_int(A.RESPONSE_CONTENT_LENGTH)} AS content_length,
       {_int(A.RESPONSE_TOOL_CALL_COUNT)} AS tool_call_count,
       {_str(A.RESPONSE_ERROR_MARKER)} AS error_marker,
       {_dbl(A.LOGPROBS_ENTROPY_MEAN)} AS entropy_mean,
       {_dbl(A.LOGPROBS_ENTROPY_MAX)} AS entropy_max,
       {_dbl(A.LOGPROBS_TOP_MASS)} AS top_mass,
       fault_injected, fault_type, fault_target, fault_experiment, fault_changed,
       attributes
FROM step_spans WHERE kind = 'llm'
"""

    views["tool_calls"] = f"""
SELECT trace_id, span_id, parent_span_id, task_id, step,
       {_str(*foreign.TOOL_NAME)} AS tool_name,
       {_str(*foreign.TOOL_CALL_ID)} AS tool_call_id,
       start_ns, end_ns, duration_ms, status_code, error_type,
       {_bool(A.TOOL_RESULT_IS_ERROR)} AS result_is_error,
       {_bool(A.TOOL_RESULT_EMPTY)} AS result_empty,
       fault_injected, fault_type, fault_changed,
       attributes
FROM step_spans WHERE kind = 'tool'
"""

    # One row per episode root, plus one per trace that has steps but no root (foreign agents,
    # or an episode whose root span has not been exported yet).
    views["episodes"] = f"""
WITH st AS (
    SELECT trace_id,
           count(*) AS n_steps,
           count(*) FILTER (WHERE kind = 'llm') AS n_llm_calls,
           count(*) FILTER (WHERE kind = 'tool') AS n_tool_calls,
           count(*) FILTER (WHERE fault_injected AND COALESCE(fault_changed, TRUE)) AS n_faults,
           bool_or(simulated) AS simulated,
           min(task_id) AS task_id,
           min(start_ns) AS start_ns,
           max(end_ns) AS end_ns
    FROM step_spans GROUP BY trace_id
)
SELECT r.trace_id, r.span_id, r.task_id,
       {_str(*foreign.AGENT_NAME, col='r.attributes')} AS agent_name,
       {_str(A.CONDITION, col='r.attributes')} AS condition,
       {_int(A.SEED, col='r.attributes')} AS seed,
       COALESCE({_bool(A.EPISODE_SUCCESS, col='r.attributes')},
                CASE r.status_code WHEN 'OK' THEN TRUE WHEN 'ERROR' THEN FALSE END) AS success,
       {_str(A.EPISODE_ERROR, col='r.attributes')} AS error,
       r.start_ns, r.end_ns, (r.end_ns - r.start_ns) / 1e6 AS duration_ms,
       COALESCE(st.n_steps, 0) AS n_steps,
       COALESCE(st.n_llm_calls, 0) AS n_llm_calls,
       COALESCE(st.n_tool_calls, 0) AS n_tool_calls,
       COALESCE(st.n_faults, 0) AS n_faults,
       COALESCE(st.n_faults, 0) > 0 AS triggered,
       COALESCE({_bool(A.SIMULATED, col='r.attributes')}, st.simulated, FALSE) AS simulated,
       r.attributes
FROM agent_roots r LEFT JOIN st ON st.trace_id = r.trace_id
UNION ALL
SELECT st.trace_id, NULL AS span_id, st.task_id, NULL AS agent_name, NULL AS condition,
       NULL AS seed, NULL AS success, NULL AS error,
       st.start_ns, st.end_ns, (st.end_ns - st.start_ns) / 1e6 AS duration_ms,
       st.n_steps, st.n_llm_calls, st.n_tool_calls, st.n_faults, st.n_faults > 0 AS triggered,
       COALESCE(st.simulated, FALSE) AS simulated, NULL::JSON AS attributes
FROM st WHERE NOT EXISTS (SELECT 1 FROM agent_roots r WHERE r.trace_id = st.trace_id)
"""

    views["injected_faults"] = f"""
SELECT r.trace_id,
       COALESCE(r.a_task_id, st.task_id) AS task_id,
       COALESCE(st.step, r.a_step) AS step,
       r.span_id, r.name AS span_name,
       r.a_fault_type AS fault_type,
       r.a_fault_target AS target,
       r.a_fault_experiment AS experiment,
       {_str(A.FAULT_STRATEGY, col='r.attributes')} AS strategy,
       r.a_fault_changed AS changed,
       {_str(A.FAULT_DIGEST_BEFORE, col='r.attributes')} AS digest_before,
       {_str(A.FAULT_DIGEST_AFTER, col='r.attributes')} AS digest_after
FROM span_roles r
LEFT JOIN step_spans st ON st.trace_id = r.trace_id AND st.span_id = r.span_id
WHERE r.a_fault_injected
  AND NOT EXISTS (SELECT 1 FROM wrapper_spans w WHERE w.trace_id = r.trace_id AND w.span_id = r.span_id)
"""
    return views


VIEWS: dict[str, str] = _view_sql()

# Derived tables the analysis tools write into the same file; created on first write (a store
# that never met them stays as the template made it). Keyed as their writers upsert them.
DIAGNOSES_DDL = """
CREATE TABLE IF NOT EXISTS diagnoses (
    trace_id VARCHAR, task_id VARCHAR, method VARCHAR, fault_type VARCHAR, target VARCHAR, step INTEGER,
    span_id VARCHAR, confidence DOUBLE, evidence VARCHAR, rule VARCHAR, created_ns BIGINT
)"""
PREDICTIONS_DDL = """
CREATE TABLE IF NOT EXISTS predictions (
    trace_id VARCHAR, task_id VARCHAR, step INTEGER, span_id VARCHAR, score DOUBLE, alarm BOOLEAN,
    threshold DOUBLE, feature_set VARCHAR, model VARCHAR, model_digest VARCHAR, scored_ns BIGINT
)"""
CAMPAIGN_RUNS_DDL = """
CREATE TABLE IF NOT EXISTS campaign_runs (
    id VARCHAR PRIMARY KEY, started TIMESTAMP, finished TIMESTAMP, args JSON, counts JSON,
    simulated BOOLEAN, status VARCHAR
)"""
PUBLIC_VIEWS = ("llm_calls", "tool_calls", "steps", "episodes", "injected_faults")


def views_digest() -> str:
    text = "\n".join(f"{name}:{sql}" for name, sql in VIEWS.items())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def create_views(conn: duckdb.DuckDBPyConnection) -> None:
    for name, sql in VIEWS.items():
        conn.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")
