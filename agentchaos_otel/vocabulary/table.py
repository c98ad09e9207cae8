"""The published error vocabulary (``errors.toml``) as lookup tables, built once per process.

Every lookup answers with a :class:`Hit`: the meaning and the row that gave it (``grpc:
DEADLINE_EXCEEDED``), so a diagnosis can cite the published code it rests on. Names are compared
in a normalised form (case and ``_ - . space`` ignored: ``RESOURCE_EXHAUSTED``,
``ResourceExhausted`` and ``resource-exhausted`` are one name), because runtimes spell the same
code in their own case conventions (gRPC in Go, Python and Rust).
"""

from __future__ import annotations

import re
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

# Meanings, most specific first: when one error carries several (a 503 whose message says "rate
# limit"), the earlier one is what it is about; ``error`` says only that the other side failed.
MEANINGS: tuple[str, ...] = ("rate_limit", "content_filter", "timeout", "connection", "auth", "not_found",
                             "invalid_request", "length", "partial", "error")
RANK: dict[str, int] = {m: i for i, m in enumerate(MEANINGS)}
GENERIC = "error"
DATA_FILE = "errors.toml"

_NORM_RE = re.compile(r"[\s_.\-]+")
# Chinese and Japanese write without spaces: each ideograph or kana is a word of its own, so a
# published phrase (Zhipu's "敏感内容") is found inside the unsegmented sentence that holds it.
_WORD_RE = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=1 << 14)  # bounded: names come from results, which a fault may rewrite
def norm(name: str) -> str:
    """``RESOURCE_EXHAUSTED`` / ``ResourceExhausted`` / ``resource-exhausted`` -> ``resourceexhausted``."""
    return _NORM_RE.sub("", name).lower()


def words(text: str) -> list[str]:
    """Lower-case alphanumeric words (and single ideographs and kana): phrases and texts are
    compared as word sequences, so punctuation and spacing (``i/o timeout``, ``Gateway
    Time-out``) do not matter."""
    return _WORD_RE.findall(text.lower())


@dataclass(frozen=True, slots=True)
class Hit:
    meaning: str
    evidence: str  # "<namespace>:<key>" of the row


def best(hits: list[Hit]) -> Hit | None:
    """The most specific of several hits (``MEANINGS`` order); the first of equals."""
    return min(hits, key=lambda h: RANK.get(h.meaning, len(RANK))) if hits else None


@dataclass
class Table:
    version: str
    rows: dict[str, list[dict[str, Any]]]
    http: dict[int, Hit]
    grpc: dict[int, Hit]
    grpc_names: dict[str, Hit]
    jsonrpc: dict[int, Hit]
    errno_number: dict[int, Hit]
    winsock: dict[int, Hit]
    numbers: dict[tuple[str, int], Hit]
    sqlstate: dict[str, Hit]
    exceptions: dict[str, Hit]  # qualified name (normalised) -> hit
    tokens: dict[str, Hit]  # names that stand alone: codes, reasons, errno/gRPC names, class names
    finish: dict[str, Hit]
    soap: dict[str, Hit]
    phrases: dict[str, list[tuple[tuple[str, ...], Hit]]]  # first word -> (words, hit), longest first
    name_parts: dict[str, Hit]
    flags: dict[str, tuple[Any, Hit, str]]  # key -> (value, hit, meaning with data)
    status_words: dict[str, Hit]
    methods: dict[str, str]
    fhir_issue: dict[str, Hit]


def _hit(ns: str, key: Any, meaning: str) -> Hit:
    if meaning not in RANK:
        raise ValueError(f"{DATA_FILE}: {ns} row {key!r} has unknown meaning {meaning!r}")
    return Hit(meaning, f"{ns}:{key}")


def _last(name: str) -> str:
    return re.split(r"::|[.#/]", name)[-1]


def build(data: dict[str, Any]) -> Table:
    """Index the rows of a parsed vocabulary file (``load`` reads the packaged one)."""
    rows = {k: v for k, v in data.items() if isinstance(v, list)}
    tokens: dict[str, Hit] = {}
    t = Table(
        version=str(data.get("version", "")), rows=rows,
        http={r["code"]: _hit("http", r["code"], r["meaning"]) for r in rows.get("http", [])},
        grpc={r["code"]: _hit("grpc", r["name"], r["meaning"]) for r in rows.get("grpc", [])},
        grpc_names={norm(r["name"]): _hit("grpc", r["name"], r["meaning"]) for r in rows.get("grpc", [])},
        jsonrpc={r["code"]: _hit("jsonrpc", r["code"], r["meaning"]) for r in rows.get("jsonrpc", [])},
        errno_number={r["number"]: _hit("errno", r["name"], r["meaning"]) for r in rows.get("errno", [])
                      if "number" in r},
        winsock={r["code"]: _hit("winsock", r["name"], r["meaning"]) for r in rows.get("winsock", [])},
        numbers={(r["system"], r["code"]): _hit(r["system"], r["code"], r["meaning"])
                 for r in rows.get("number", [])},
        sqlstate={r["code"].upper(): _hit("sqlstate", r["code"], r["meaning"]) for r in rows.get("sqlstate", [])},
        exceptions={}, tokens=tokens,
        finish={norm(r["value"]): _hit("finish_reason", r["value"], r["meaning"])
                for r in rows.get("finish_reason", [])},
        soap={norm(r["value"]): _hit("soap", r["value"], r["meaning"]) for r in rows.get("soap", [])},
        phrases={}, name_parts={r["part"]: _hit("name", r["part"], r["meaning"]) for r in rows.get("name_part", [])},
        flags={}, status_words={norm(r["value"]): _hit("status", r["value"], r["meaning"])
                                for r in rows.get("status_word", [])},
        methods={r["verb"]: r["kind"] for r in rows.get("method", [])},
        fhir_issue={norm(r["code"]): _hit("fhir", r["code"], r["meaning"]) for r in rows.get("fhir_issue", [])},
    )
    # Stand-alone names: a name in two systems with two meanings is left out (ambiguous alone).
    seen: dict[str, set[str]] = defaultdict(set)
    candidates: list[tuple[str, Hit]] = []
    for r in rows.get("grpc", []):
        candidates.append((r["name"], t.grpc[r["code"]]))
    for r in rows.get("errno", []):
        candidates.append((r["name"], _hit("errno", r["name"], r["meaning"])))
    for r in rows.get("winsock", []):
        candidates.append((r["name"], t.winsock[r["code"]]))
    for r in rows.get("code", []):
        candidates.append((r["value"], _hit(r.get("system", "code"), r["value"], r["meaning"])))
    for r in rows.get("exception", []):
        hit = _hit("exception", r["name"], r["meaning"])
        t.exceptions[norm(r["name"])] = hit
        candidates.append((_last(r["name"]), hit))
    for name, hit in candidates:
        key = norm(name)
        seen[key].add(hit.meaning)
        tokens.setdefault(key, hit)
    for key, meanings in seen.items():
        if len(meanings) > 1:
            del tokens[key]
    by_first: dict[str, list[tuple[tuple[str, ...], Hit]]] = defaultdict(list)
    texts = [(r["text"], _hit("phrase", r["text"], r["meaning"])) for r in rows.get("phrase", [])]
    texts += [(r["message"], _hit("errno", r["name"], r["meaning"])) for r in rows.get("errno", [])]
    texts += [(r["phrase"], _hit("http", r["code"], r["meaning"])) for r in rows.get("http", [])
              if len(words(r["phrase"])) >= 2]
    texts += [(r["name"], _hit("jsonrpc", r["code"], r["meaning"])) for r in rows.get("jsonrpc", [])]
    for text, hit in texts:
        ws = tuple(words(text))
        if ws and all(ws != w for w, _ in by_first[ws[0]]):
            by_first[ws[0]].append((ws, hit))
    for lst in by_first.values():
        lst.sort(key=lambda x: -len(x[0]))
    t.phrases = dict(by_first)
    for r in rows.get("flag", []):
        t.flags[norm(r["key"])] = (r["value"], _hit("flag", r["key"], r["meaning"]),
                                   r.get("with_data", r["meaning"]))
    return t


@lru_cache(maxsize=1)
def load() -> Table:
    """The packaged vocabulary, parsed on first use (not at import: most processes never need it)."""
    with resources.files(__package__).joinpath(DATA_FILE).open("rb") as fh:
        return build(tomllib.load(fh))
