"""BFCL v4 multi-turn tasks, read from the data files the ``bfcl-eval`` package ships.

The harness must see exactly what BFCL's own OpenAI function-calling handler sends, otherwise our
success rates are not comparable with published ones: the same function docs with the Python
hint appended to every description, the same Gorilla-to-OpenAPI type mapping, and the same
held-out ("missed") functions that only appear at a later turn. The files are read with
``importlib.resources`` so nothing here imports BFCL's heavy model-handler modules.
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import inspect
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from agentchaos_otel.errors import UserError

BASE_CATEGORY = "multi_turn_base"
VERSION_PREFIX = "BFCL_v4"
# What BFCL's FC handler says as the user turn in which held-out functions are added.
ADDITIONAL_FUNCTION_PROMPT = "I have updated some more functions you can choose from. What about now?"
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."

# BFCL's GORILLA_TO_OPENAPI table (constants/type_mappings.py), restricted to the types that are
# not Java/JavaScript only; anything unknown becomes "string" as BFCL does.
GORILLA_TO_OPENAPI: dict[str, str] = {
    "integer": "integer", "number": "number", "float": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array", "dict": "object",
    "object": "object", "tuple": "array", "any": "string", "byte": "integer", "short": "integer",
    "long": "integer", "double": "number", "char": "string", "ArrayList": "array", "Array": "array",
    "HashMap": "object", "Hashtable": "object", "Queue": "array", "Stack": "array", "String": "string",
}


class BfclUnavailable(UserError, RuntimeError):
    """The ``bfcl-eval`` package (data files, API classes, checker) is not installed."""


def _data_root() -> Any:
    try:
        return resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError as exc:  # pragma: no cover - exercised only without the package
        raise BfclUnavailable("bfcl-eval is not installed; run agentchaos_otel/agents/bfcl/install.sh") from exc


def _read_jsonl(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@functools.cache
def _func_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    path = _data_root() / "multi_turn_func_doc" / MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]
    return tuple(_read_jsonl(path))


@functools.cache
def api_class(class_name: str) -> type:
    """The BFCL simulated API class behind a class name such as ``GorillaFileSystem``."""
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
    return getattr(module, class_name)


@dataclass(frozen=True, eq=False)
class Call:
    """One ground-truth function call with positional arguments bound to parameter names."""

    name: str
    args: dict[str, Any]
    source: str  # the call string exactly as BFCL's ground truth spells it


@dataclass(frozen=True, eq=False)
class BfclTask:
    """One multi-turn task as BFCL's inference loop and checker see it."""

    id: str
    category: str
    questions: tuple[tuple[dict[str, Any], ...], ...]
    initial_config: dict[str, Any]
    involved_classes: tuple[str, ...]
    ground_truth: tuple[tuple[str, ...], ...]
    functions: tuple[dict[str, Any], ...]  # BFCL function docs offered from the first turn
    missed_function: dict[int, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    excluded_function: tuple[str, ...] = ()

    @property
    def n_turns(self) -> int:
        return len(self.questions)

    @property
    def long_context(self) -> bool:
        return "long_context" in self.category or "composite" in self.category

    def turn_messages(self, turn: int) -> list[dict[str, Any]]:
        """User messages that open a turn; a held-out-function turn gets BFCL's fixed prompt."""
        if turn in self.missed_function:
            return [{"role": "user", "content": ADDITIONAL_FUNCTION_PROMPT}]
        return [dict(m) for m in self.questions[turn]]

    def functions_at(self, turn: int) -> list[dict[str, Any]]:
        """Function docs available during a turn (held-out ones appear from their turn on)."""
        docs = list(self.functions)
        for t in sorted(self.missed_function):
            if t <= turn:
                docs.extend(self.missed_function[t])
        return docs

    def tools_at(self, turn: int) -> list[dict[str, Any]]:
        return to_openai_tools(self.functions_at(turn))

    def ground_truth_calls(self, turn: int) -> list[Call]:
        return [parse_call(s, self.involved_classes) for s in self.ground_truth[turn]]

    def as_test_entry(self) -> dict[str, Any]:
        """The prompt entry the official checker reads (id, initial config, involved classes)."""
        return {"id": self.id, "initial_config": copy.deepcopy(self.initial_config),
                "involved_classes": list(self.involved_classes)}


# --- Function docs -> OpenAI tools ------------------------------------------------------------


def _cast_properties(properties: dict[str, Any]) -> dict[str, Any]:
    """BFCL's ``_cast_to_openai_type``: map Gorilla types, recurse into items and properties."""
    for key, value in properties.items():
        if "type" not in value:
            value["type"] = "string"
        else:
            var_type = value["type"]
            if var_type == "float":
                value["format"] = "float"
                value["description"] = value.get("description", "") + " This is a float type value."
            value["type"] = GORILLA_TO_OPENAPI.get(var_type, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast_properties(value["properties"])
            elif "items" in value:
                items = value["items"]
                items["type"] = GORILLA_TO_OPENAPI.get(items.get("type", "string"), "string")
                if items["type"] == "array" and "items" in items:
                    inner = items["items"]
                    inner["type"] = GORILLA_TO_OPENAPI.get(inner.get("type", "string"), "string")
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast_properties(items["properties"])
        properties[key] = value
    return properties


def to_openai_tools(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions ``tools`` for BFCL function docs, as BFCL's OpenAI FC handler builds them.

    Dots become underscores in names, the root schema becomes ``object``, types are mapped, and
    the ``response`` schema stays on the function object as BFCL leaves it for OpenAI models.
    """
    tools = []
    for item in copy.deepcopy(functions):
        item["name"] = re.sub(r"\.", "_", item["name"])
        params = item.setdefault("parameters", {"properties": {}})
        params["type"] = "object"
        params["properties"] = _cast_properties(params.get("properties") or {})
        tools.append({"type": "function", "function": item})
    return tools


def _with_python_hint(doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    doc["description"] = doc.get("description", "") + PYTHON_HINT
    return doc


# --- Ground-truth call strings ----------------------------------------------------------------


def _literal(node: ast.expr) -> Any:
    return ast.literal_eval(node)


@functools.cache
def _parameter_names(class_names: tuple[str, ...], name: str) -> tuple[str, ...]:
    for class_name in class_names:
        method = getattr(api_class(class_name), name, None)
        if callable(method) and not name.startswith("_"):
            params = list(inspect.signature(method).parameters)
            return tuple(p for p in params if p != "self")
    return ()


def parse_call(source: str, class_names: tuple[str, ...] = ()) -> Call:
    """Parse ``name(a, b=1)`` into a :class:`Call`, naming positional arguments from the API.

    Ground truth sometimes passes arguments positionally (``sort('final_report.pdf')``); a tool
    call needs names, which come from the signature of the method on the involved classes.
    """
    tree = ast.parse(source.strip(), mode="eval").body
    if not isinstance(tree, ast.Call) or not isinstance(tree.func, ast.Name):
        raise ValueError(f"not a plain function call: {source!r}")
    name = tree.func.id
    args: dict[str, Any] = {}
    if tree.args:
        names = _parameter_names(tuple(class_names), name)
        if len(names) < len(tree.args):
            raise ValueError(f"cannot name positional arguments of {source!r}")
        for pname, node in zip(names, tree.args, strict=False):
            args[pname] = _literal(node)
    for kw in tree.keywords:
        if kw.arg is None:
            raise ValueError(f"**kwargs in ground truth are not supported: {source!r}")
        args[kw.arg] = _literal(kw.value)
    return Call(name=name, args=args, source=source)


def call_string(name: str, args: dict[str, Any]) -> str:
    """A call as BFCL's FC decoder logs it (``convert_to_function_call``): ``name(k=repr(v),...)``."""
    return f"{name}({','.join(f'{k}={v!r}' for k, v in args.items())})"


# --- Loading ----------------------------------------------------------------------------------


def _build_task(entry: dict[str, Any], answer: dict[str, Any], category: str) -> BfclTask:
    classes = tuple(entry["involved_classes"])
    docs: list[dict[str, Any]] = []
    for class_name in classes:
        docs.extend(copy.deepcopy(d) for d in _func_docs(class_name))
    missed: dict[int, tuple[dict[str, Any], ...]] = {}
    for turn, names in (entry.get("missed_function") or {}).items():
        held: list[dict[str, Any]] = []
        for name in names:
            for i, doc in enumerate(docs):
                if doc["name"] == name:
                    held.append(docs.pop(i))
                    break
        missed[int(turn)] = tuple(held)
    # BFCL appends the language hint after taking the held-out docs out, so they never get it.
    docs = [_with_python_hint(d) for d in docs]
    return BfclTask(
        id=entry["id"], category=category,
        questions=tuple(tuple(turn) for turn in entry["question"]),
        initial_config=entry.get("initial_config") or {},
        involved_classes=classes,
        ground_truth=tuple(tuple(t) for t in answer["ground_truth"]),
        functions=tuple(docs), missed_function=missed,
        excluded_function=tuple(entry.get("excluded_function") or ()),
    )


@functools.cache
def _load(category: str) -> tuple[BfclTask, ...]:
    root = _data_root()
    entries = _read_jsonl(root / f"{VERSION_PREFIX}_{category}.json")
    answer_file = root / "possible_answer" / f"{VERSION_PREFIX}_{category}.json"
    answers = {a["id"]: a for a in _read_jsonl(answer_file)}
    return tuple(_build_task(e, answers[e["id"]], category) for e in entries)


def load_tasks(category: str = BASE_CATEGORY, ids: list[str] | None = None) -> list[BfclTask]:
    """All tasks of a multi-turn category (200 for ``multi_turn_base``), or the listed ids in order."""
    tasks = _load(category)
    if ids is None:
        return list(tasks)
    by_id = {t.id: t for t in tasks}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise KeyError(f"unknown BFCL task id(s): {', '.join(missing)}")
    return [by_id[i] for i in ids]


def get_task(task_id: str) -> BfclTask:
    category = task_id.rsplit("_", 1)[0]
    return load_tasks(category, [task_id])[0]


def resolve_task_ids(spec: str, category: str = BASE_CATEGORY) -> list[str]:
    """Task ids from a comma list of ids, indices or ranges (``0-9,17,multi_turn_base_42``)."""
    ids: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part == "all":
            ids.extend(t.id for t in _load(category))
        elif re.fullmatch(r"\d+-\d+", part):
            lo, hi = (int(x) for x in part.split("-"))
            ids.extend(f"{category}_{i}" for i in range(lo, hi + 1))
        elif part.isdigit():
            ids.append(f"{category}_{part}")
        else:
            ids.append(part)
    return ids
