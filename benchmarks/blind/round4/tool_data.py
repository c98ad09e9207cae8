# ruff: noqa: E501  (a table of published wordings and their sources, one per line)
"""Data forms of tool faults: the real result, transformed the way real systems get it wrong.

A wrong or stale value keeps the shape and changes what the agent decides; a partial result is
flagged the way its system flags it; renamed keys and numbers as strings come from a schema or
serializer change; empty and cut payloads are what a broken backend or proxy delivers. Each
transform is built so that the agent's decision really changes (checked when the corpus is built:
the episode must fail as planned).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.blind.round4.world import ERROR_RATE_THRESHOLD, World, required_replicas

Transform = Callable[[dict[str, Any], World, dict[str, Any]], str]


@dataclass(frozen=True)
class DataForm:
    name: str
    family: str
    label: str
    source: str
    tools: tuple[str, ...]
    fn: Transform


def _dump(obj: Any) -> str:
    return json.dumps(obj)


# -- wrong or stale values ------------------------------------------------------------------

def _scale_points(data: dict[str, Any], world: World, args: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    pts = [p["v"] for p in out["points"]]
    if out["metric"] == "error_rate":
        factor = 0.9 * ERROR_RATE_THRESHOLD / max(pts)
    else:
        r = out["replicas"]
        factor = next(f for f in (0.8, 0.7, 1.3, 0.6, 1.5, 0.5)
                      if required_replicas(r, max(pts) * f) != required_replicas(r, max(pts)))
    for p in out["points"]:
        p["v"] = round(p["v"] * factor, 2)
    return out


def metrics_shifted(data, world, args):
    return _dump(_scale_points(data, world, args))


def metrics_stale_window(data, world, args):
    out = _scale_points(data, world, args)
    for i, p in enumerate(out["points"]):
        p["t"] = f"2026-11-30T10:{2 * i:02d}:00Z"          # yesterday's window, served from a cache
    return _dump(out)


def metrics_replicas_stale(data, world, args):
    out = copy.deepcopy(data)
    peak = max(p["v"] for p in out["points"])
    r = out["replicas"]
    out["replicas"] = next(x for x in (r - 2, r + 3, r - 1, r + 5) if x > 0
                           and required_replicas(x, peak) != required_replicas(r, peak))
    return _dump(out)


def deploy_status_swapped(data, world, args):
    out = copy.deepcopy(data)
    deps = out["deployments"]
    good = next(i for i, d in enumerate(deps) if d["status"] == "healthy")
    deps[good]["status"] = "degraded"                  # the agent then takes the next older one
    deps[good + 1]["status"] = "healthy"
    return _dump(out)


def deploy_version_neighbour(data, world, args):
    out = copy.deepcopy(data)
    deps = out["deployments"]
    good = next(i for i, d in enumerate(deps) if d["status"] == "healthy")
    major, minor, patch = re.match(r"v(\d+)\.(\d+)\.(\d+)", deps[good]["version"]).groups()
    deps[good]["version"] = f"v{major}.{minor}.{(int(patch) + 1) % 10}"
    return _dump(out)


def _other_service(world: World, name: str) -> str:
    return next(s for s in sorted(world.services) if s != name)


def incident_wrong_service(data, world, args):
    return _dump(dict(data, service=_other_service(world, data["service"])))


def incident_team_swapped(data, world, args):
    from benchmarks.blind.round4.world import TEAMS
    return _dump(dict(data, team=next(t for t in TEAMS if t != data["team"])))


def incident_severity_shifted(data, world, args):
    shift = {"sev1": "sev2", "sev2": "sev3", "sev3": "sev2"}
    return _dump(dict(data, severity=shift[data["severity"]]))


def incident_status_flipped(data, world, args):
    return _dump(dict(data, status="investigating" if data["status"] == "resolved" else "resolved"))


def _swap_codes(data: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    codes = [h["code"] for h in out["hits"]]
    a, b = sorted(set(codes), key=codes.count, reverse=True)[:2]
    for h in out["hits"]:
        h["code"] = b if h["code"] == a else a if h["code"] == b else h["code"]
    return out


def logs_codes_swapped(data, world, args):
    return _dump(_swap_codes(data))


def logs_stale_index(data, world, args):
    out = _swap_codes(data)
    out["index"] = f"logs-{data['service']}-2026.11.30"
    for h in out["hits"]:
        h["ts"] = h["ts"].replace("2026-12-01", "2026-11-30")
    return _dump(out)


# -- partial results ---------------------------------------------------------------------------

def _cut_deployments(data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    out = copy.deepcopy(data)
    deps = out["deployments"]
    keep = next(i for i, d in enumerate(deps) if d["status"] == "healthy")
    out["deployments"] = deps[:max(keep, 1)]
    return out, len(deps) - max(keep, 1)


def deploy_k8s_remaining(data, world, args):
    out, rest = _cut_deployments(data)
    out["metadata"] = {"resourceVersion": "918273", "continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTE4MjczLCJzdGFydCI6InYzIn0",
                       "remainingItemCount": rest}
    return _dump(out)


def deploy_partial_flag(data, world, args):
    out, _ = _cut_deployments(data)
    out["partial"] = True
    return _dump(out)


def _half_points(data: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out["points"] = out["points"][: len(out["points"]) // 2]
    return out


def metrics_partial_flag(data, world, args):
    out = _half_points(data)
    out["partial"] = True
    return _dump(out)


def metrics_grafana_notice(data, world, args):
    out = _half_points(data)
    out["meta"] = {"notices": [{"severity": "warning", "text": "Query result truncated: max data points (4) reached"}]}
    return _dump(out)


def metrics_incomplete_status(data, world, args):
    out = _half_points(data)
    out["status"] = "incomplete"
    out["warnings"] = ["query hit max_samples limit; returning the first 4 of 8 points"]
    return _dump(out)


def _half_hits(data: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out["hits"] = out["hits"][: len(out["hits"]) // 2]
    return out


def logs_es_timed_out(data, world, args):
    out = _half_hits(data)
    out["timed_out"] = True
    out["_shards"] = {"total": 6, "successful": 3, "skipped": 0, "failed": 3}
    return _dump(out)


def logs_total_exceeds(data, world, args):
    out = _half_hits(data)
    out["total"] = len(data["hits"])
    return _dump(out)


def logs_rows_before_limit(data, world, args):
    out = _half_hits(data)
    out.pop("total", None)
    out["rows_before_limit_at_least"] = len(data["hits"])
    out["statistics"] = {"elapsed": 0.021, "rows_read": 48211}
    return _dump(out)


def logs_output_cut_line(data, world, args):
    out = _half_hits(data)
    return _dump(out) + f"\n... output truncated ({len(out['hits'])} of {len(data['hits'])} hits shown)"


def incident_incomplete(data, world, args):
    keys = list(data)
    out = {k: data[k] for k in keys[: len(keys) // 2]}
    out["incomplete"] = True
    return _dump(out)


# -- renamed keys, numbers as strings --------------------------------------------------------------

def _rename(obj: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(obj, dict):
        return {fn(k): _rename(v, fn) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rename(v, fn) for v in obj]
    if isinstance(obj, bool) or obj is None:
        return obj
    if isinstance(obj, (int, float)):
        return str(obj)
    return obj


LEGACY = {"points": "datapoints", "v": "value", "t": "ts", "replicas": "desired_count", "hits": "results",
          "deployments": "revisions", "status": "state", "service": "app", "team": "owner", "severity": "urgency",
          "version": "image_tag", "code": "error_code", "id": "number", "page_id": "dedup_key", "key": "issue_key",
          "priority": "prio", "metric": "series", "title": "name"}
ABBREV = {"points": "pts", "v": "val", "replicas": "repl", "hits": "docs", "deployments": "deps", "status": "st",
          "service": "svc", "team": "grp", "severity": "sev", "version": "ver", "code": "err", "id": "ref",
          "key": "k", "priority": "pri", "title": "ttl"}


def _camel(k: str) -> str:
    head, *rest = k.split("_")
    return head + "".join(w.title() for w in rest)


def _force(fn: Callable[[str], str], table: dict[str, str]) -> Callable[[str], str]:
    return lambda k: table.get(k, fn(k))


def keys_camel(data, world, args):
    return _dump(_rename(data, _force(_camel, {"v": "value", "t": "timestamp", "points": "dataPoints", "hits": "hitList",
                                               "status": "currentStatus", "service": "serviceName", "team": "teamName",
                                               "severity": "severityLevel", "version": "versionId", "code": "errorCode",
                                               "deployments": "deploymentList", "replicas": "replicaCount"})))


def keys_pascal(data, world, args):
    return _dump(_rename(data, lambda k: "".join(w.title() for w in LEGACY.get(k, k).split("_"))))


def keys_kebab(data, world, args):
    return _dump(_rename(data, lambda k: LEGACY.get(k, k).replace("_", "-") + ("-v2" if k in LEGACY else "")))


def keys_legacy(data, world, args):
    return _dump(_rename(data, lambda k: LEGACY.get(k, k)))


def keys_abbrev(data, world, args):
    return _dump(_rename(data, lambda k: ABBREV.get(k, k)))


def keys_upper(data, world, args):
    return _dump(_rename(data, lambda k: LEGACY.get(k, k).upper()))


# -- empty and cut payloads -------------------------------------------------------------------

def empty_object(data, world, args):
    return "{}"


def empty_array(data, world, args):
    return "[]"


def empty_string(data, world, args):
    return ""


def json_null(data, world, args):
    return "null"


def _cut(data: dict[str, Any], frac: float) -> str:
    text = _dump(data)
    return text[: int(len(text) * frac)]


def json_cut_half(data, world, args):
    return _cut(data, 0.5)


def json_cut_tail(data, world, args):
    return _cut(data, 0.9)


def json_cut_in_string(data, world, args):
    text = _dump(data)
    quote = text.find('"', len(text) // 3)
    return text[: quote + 4]


def json_unbalanced(data, world, args):
    text = _dump(data)
    return text[:-1] if text.endswith("}") else text + "{"


def json_cut_chunk(data, world, args):
    return _cut(data, 0.3)


ALL = ("get_incident", "update_incident", "query_metrics", "search_logs", "list_deployments", "rollback",
       "scale_service", "page_oncall", "create_ticket")
READS = ("get_incident", "query_metrics", "search_logs", "list_deployments")
PROM_STALE = "https://prometheus.io/docs/prometheus/latest/querying/basics/#staleness"
DDB_READ = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html"
K8S_RV = "https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-get-and-list"
ES_NRT = "https://www.elastic.co/guide/en/elasticsearch/reference/current/near-real-time.html"
K8S_CHUNK = "https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks"

DATA_FORMS: dict[str, DataForm] = {f.name: f for f in [
    DataForm("metrics_values_shifted", "stale_read", "wrong_value", "https://docs.datadoghq.com/metrics/guide/interpolation-the-fill-modifier-explained/", ("query_metrics",), metrics_shifted),
    DataForm("metrics_stale_window", "stale_read", "wrong_value", PROM_STALE, ("query_metrics",), metrics_stale_window),
    DataForm("metrics_replicas_stale_cache", "stale_read", "wrong_value", K8S_RV, ("query_metrics",), metrics_replicas_stale),
    DataForm("deploy_status_swapped", "stale_read", "wrong_value", "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#checking-rollout-history-of-a-deployment", ("list_deployments",), deploy_status_swapped),
    DataForm("deploy_version_neighbour", "wrong_entity", "wrong_value", "https://docs.aws.amazon.com/AmazonECS/latest/developerguide/deployment-type-ecs.html", ("list_deployments",), deploy_version_neighbour),
    DataForm("incident_wrong_service", "wrong_entity", "wrong_value", DDB_READ, ("get_incident",), incident_wrong_service),
    DataForm("incident_team_swapped", "wrong_entity", "wrong_value", "https://support.pagerduty.com/main/docs/escalation-policies", ("get_incident",), incident_team_swapped),
    DataForm("incident_severity_shifted", "stale_read", "wrong_value", "https://docs.servicenow.com/bundle/washingtondc-it-service-management/page/product/incident-management/reference/r_PrioritizationOfIncidents.html", ("get_incident",), incident_severity_shifted),
    DataForm("incident_status_stale", "stale_read", "wrong_value", DDB_READ, ("get_incident",), incident_status_flipped),
    DataForm("logs_codes_swapped", "wrong_entity", "wrong_value", "https://www.elastic.co/guide/en/elasticsearch/reference/current/search-aggregations-bucket-terms-aggregation.html", ("search_logs",), logs_codes_swapped),
    DataForm("logs_stale_index", "stale_read", "wrong_value", ES_NRT, ("search_logs",), logs_stale_index),
    DataForm("deploy_k8s_remaining_items", "partial_results", "truncated", K8S_CHUNK, ("list_deployments",), deploy_k8s_remaining),
    DataForm("deploy_partial_flag", "partial_results", "truncated", "https://developer.hashicorp.com/nomad/api-docs#blocking-queries", ("list_deployments",), deploy_partial_flag),
    DataForm("metrics_partial_flag", "partial_results", "truncated", "https://docs.datadoghq.com/api/latest/metrics/#query-timeseries-data-across-multiple-products", ("query_metrics",), metrics_partial_flag),
    DataForm("metrics_grafana_notice", "partial_results", "truncated", "https://grafana.com/docs/grafana/latest/developers/plugins/data-frames/#notices", ("query_metrics",), metrics_grafana_notice),
    DataForm("metrics_incomplete_status", "partial_results", "truncated", "https://prometheus.io/docs/prometheus/latest/querying/api/#format-overview", ("query_metrics",), metrics_incomplete_status),
    DataForm("logs_es_timed_out", "partial_results", "truncated", "https://www.elastic.co/guide/en/elasticsearch/reference/current/search-your-data.html#search-timeout", ("search_logs",), logs_es_timed_out),
    DataForm("logs_total_exceeds_hits", "partial_results", "truncated", "https://www.elastic.co/guide/en/elasticsearch/reference/current/search-your-data.html#track-total-hits", ("search_logs",), logs_total_exceeds),
    DataForm("logs_rows_before_limit", "partial_results", "truncated", "https://clickhouse.com/docs/en/interfaces/formats#json", ("search_logs",), logs_rows_before_limit),
    DataForm("logs_output_cut_line", "partial_results", "truncated", "https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/AnalyzingLogData.html", ("search_logs",), logs_output_cut_line),
    DataForm("incident_incomplete", "partial_results", "truncated", "https://developer.servicenow.com/dev.do#!/reference/api/latest/rest/c_TableAPI", ("get_incident",), incident_incomplete),
    DataForm("keys_camel_case", "key_drift", "key_rename", "https://google.github.io/styleguide/jsoncstyleguide.xml#Property_Name_Format", READS, keys_camel),
    DataForm("keys_pascal_case", "key_drift", "key_rename", "https://learn.microsoft.com/en-us/dotnet/standard/serialization/system-text-json/customize-properties", READS, keys_pascal),
    DataForm("keys_kebab_v2", "key_drift", "key_rename", "https://jsonapi.org/recommendations/#naming", READS, keys_kebab),
    DataForm("keys_legacy_schema", "key_drift", "key_rename", "https://developer.pagerduty.com/docs/ZG9jOjExMDI5NTgx-events-api-v2-overview", READS, keys_legacy),
    DataForm("keys_abbreviated", "key_drift", "key_rename", "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-use-s3-too.html", READS, keys_abbrev),
    DataForm("keys_upper_snake", "key_drift", "key_rename", "https://docs.snowflake.com/en/sql-reference/identifiers-syntax", READS, keys_upper),
    DataForm("empty_object", "empty_payload", "empty", "https://docs.datadoghq.com/api/latest/metrics/", READS, empty_object),
    DataForm("empty_array", "empty_payload", "empty", "https://www.elastic.co/guide/en/elasticsearch/reference/current/search-search.html", READS, empty_array),
    DataForm("empty_string", "empty_payload", "empty", "https://modelcontextprotocol.io/specification/2025-06-18/server/tools#tool-result", READS, empty_string),
    DataForm("json_null", "empty_payload", "empty", "https://grafana.com/docs/grafana/latest/developers/http_api/data_source/", READS, json_null),
    DataForm("json_cut_half", "payload_cut", "malformed_json", "https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_buffering", READS, json_cut_half),
    DataForm("json_cut_tail", "payload_cut", "malformed_json", "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html", READS, json_cut_tail),
    DataForm("json_cut_in_string", "payload_cut", "malformed_json", "https://www.rfc-editor.org/rfc/rfc9112#name-message-body-length", READS, json_cut_in_string),
    DataForm("json_unbalanced", "payload_cut", "malformed_json", "https://www.rfc-editor.org/rfc/rfc8259#section-2", READS, json_unbalanced),
    DataForm("json_cut_chunk", "payload_cut", "malformed_json", "https://www.rfc-editor.org/rfc/rfc9112#name-chunked-transfer-coding", READS, json_cut_chunk),
]}
