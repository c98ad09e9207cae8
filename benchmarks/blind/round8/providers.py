"""The OpenAI-compatible providers the loopback server imitates: base path, model, id shapes, extras.

Shapes follow each provider's public API reference (cited in README.md): Groq's ``x_groq`` and
timing usage, Azure's ``prompt_filter_results`` / ``content_filter_results``, Cerebras's
``time_info``, llama.cpp's ``timings``, Ollama's ``fp_ollama`` fingerprint, Mistral's 9-character
tool-call ids, Gemini's OpenAI-compatible base path, Databricks' serving-endpoints path.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Provider:
    name: str
    base: str                      # path under the loopback host
    model: str
    query: str = ""                # e.g. Azure's api-version


PROVIDERS: dict[str, Provider] = {p.name: p for p in [
    Provider("groq", "/openai/v1", "llama-3.3-70b-versatile"),
    Provider("together", "/v1", "meta-llama/Llama-3.3-70B-Instruct-Turbo"),
    Provider("fireworks", "/inference/v1", "accounts/fireworks/models/llama-v3p3-70b-instruct"),
    Provider("mistral", "/v1", "mistral-large-latest"),
    Provider("xai", "/v1", "grok-3"),
    Provider("gemini", "/v1beta/openai", "gemini-2.5-flash"),
    Provider("azure", "/openai/deployments/desk-gpt-4o", "gpt-4o", "2024-10-21"),
    Provider("cerebras", "/v1", "llama-3.3-70b"),
    Provider("sambanova", "/v1", "Meta-Llama-3.3-70B-Instruct"),
    Provider("nim", "/v1", "meta/llama-3.3-70b-instruct"),
    Provider("databricks", "/serving-endpoints", "databricks-meta-llama-3-3-70b-instruct"),
    Provider("snowflake", "/api/v2/cortex/v1", "llama3.3-70b"),
    Provider("ollama", "/v1", "llama3.1:8b"),
    Provider("vllm", "/v1", "Qwen/Qwen2.5-7B-Instruct"),
    Provider("llamacpp", "/v1", "qwen2.5-7b-instruct-q4_k_m.gguf"),
    Provider("tgi", "/v1", "tgi"),
    Provider("lmstudio", "/v1", "qwen2.5-7b-instruct"),
]}

FAMILY_PROVIDER = {f"llm_{n}": n for n in PROVIDERS} | {"llm_gateway": "vllm"}


def _h(*parts: Any) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()


def response_id(provider: str, key: str) -> str:
    h = _h(provider, key)
    if provider in ("groq", "ollama", "vllm", "llamacpp", "lmstudio", "azure", "tgi"):
        return "chatcmpl-" + (h[:29] if provider != "ollama" else str(int(h[:6], 16)))
    if provider in ("mistral", "cerebras", "sambanova"):
        return h[:32]
    if provider == "together":
        return f"{h[:7]}-{h[7:11]}-{h[11:15]}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def call_id(provider: str, key: str) -> str:
    h = _h("call", provider, key)
    if provider == "mistral":
        return "".join(c for c in h if c.isalnum())[:9]
    if provider in ("gemini",):
        return f"function-call-{int(h[:15], 16)}"
    return "call_" + h[:24]


def extras(provider: str, usage: dict[str, int], finish: str) -> dict[str, Any]:
    """Members the provider adds beside the OpenAI ones (and what it adds into usage)."""
    out: dict[str, Any] = {}
    if provider == "groq":
        out["x_groq"] = {"id": "req_" + _h("xg", usage)[:26]}
        usage.update(queue_time=0.02, prompt_time=0.004, completion_time=0.03, total_time=0.034)
    elif provider == "azure":
        out["prompt_filter_results"] = [{"prompt_index": 0, "content_filter_results": {
            k: {"filtered": False, "severity": "safe"} for k in ("hate", "self_harm", "sexual", "violence")}}]
    elif provider == "cerebras":
        out["time_info"] = {"queue_time": 0.0002, "prompt_time": 0.003, "completion_time": 0.02, "total_time": 0.025}
    elif provider == "llamacpp":
        out["timings"] = {"prompt_n": usage["prompt_tokens"], "predicted_n": usage["completion_tokens"],
                          "predicted_per_second": 41.7}
    elif provider == "ollama":
        out["system_fingerprint"] = "fp_ollama"
    elif provider == "xai":
        out["system_fingerprint"] = "fp_0d4c8e1b59"
    elif provider == "vllm":
        out["prompt_logprobs"] = None
    elif provider == "together":
        out["prompt"] = []
    return out
