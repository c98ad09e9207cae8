"""The seven tool-result transformations on BFCL-like results (nested dicts, lists, dates, ids)."""

from __future__ import annotations

import copy
import datetime as dt
import json
import random
from typing import Any

import pytest

from agentchaos_otel.faults.tool_result import (
    CONTENT_FREE_KINDS,
    TOOL_FAULT_KINDS,
    EpisodeToolState,
    UnknownToolFault,
    UntransformableResult,
    apply_tool_fault,
)
from agentchaos_otel.signals import is_json

ORDER: dict[str, Any] = {
    "order_id": 12345,
    "reference": "ORD-0042",
    "placed_on": "2024-03-15",
    "total": 149.99,
    "quantity": 3,
    "customer": {"customer_id": "CUST-007", "name": "Ada Lovelace", "since": "2019-12-31", "vip": True},
    "items": [
        {"sku": "SKU-100", "price": 19.99, "qty": 2},
        {"sku": "SKU-205", "price": 5.5, "qty": 1},
        {"sku": "SKU-310", "price": 104.51, "qty": 1},
        {"sku": "SKU-999", "price": 0.0, "qty": 1},
    ],
    "status": "shipped",
}

FLIGHTS: dict[str, Any] = {
    "travel_cost_list": [320.0, 410.5, 275.25, 980.0, 150.0],
    "departure_date": "2024-12-31",
    "booking_id": 3426812,
    "note": None,
}


def apply(kind: str, result: Any, seed: int = 0, state: EpisodeToolState | None = None) -> Any:
    return apply_tool_fault(kind, result, rng=random.Random(seed), state=state or EpisodeToolState(seed=1))


def leaves(value: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], Any]:
    if isinstance(value, dict):
        out: dict[tuple[Any, ...], Any] = {}
        for k, v in value.items():
            out.update(leaves(v, (*path, k)))
        return out
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(leaves(v, (*path, i)))
        return out
    return {path: value}


def key_paths(value: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Dict key paths, list positions ignored (they may be swapped)."""
    if isinstance(value, dict):
        out = set()
        for k, v in value.items():
            out.add((*path, k))
            out |= key_paths(v, (*path, k))
        return out
    if isinstance(value, list):
        return set().union(*(key_paths(v, path) for v in value)) if value else set()
    return set()


@pytest.mark.parametrize("kind", TOOL_FAULT_KINDS)
def test_every_kind_leaves_the_real_result_untouched(kind: str) -> None:
    original = copy.deepcopy(ORDER)
    shown = apply(kind, ORDER)
    assert ORDER == original
    assert shown != ORDER


def test_timeout_and_rate_limit_are_the_study_error_objects() -> None:
    assert apply("timeout", ORDER) == {"error": "timeout"}
    assert apply("rate_limit", ORDER) == {"error": "rate_limit", "status": 429}
    # Text results get the same object as JSON text: the agent loop passes strings on verbatim.
    assert json.loads(apply("timeout", json.dumps(ORDER))) == {"error": "timeout"}
    assert json.loads(apply("rate_limit", "Order placed.")) == {"error": "rate_limit", "status": 429}


@pytest.mark.parametrize(("result", "expected"), [
    (ORDER, {}), ([1, 2], []), ("File moved.", ""), (json.dumps(ORDER), ""), (42, ""), (None, None)])
def test_empty_matches_the_result_type(result: Any, expected: Any) -> None:
    shown = apply("empty", result)
    assert shown == expected and type(shown) is type(expected)


def test_content_free_kinds_are_the_studys_three() -> None:
    assert set(CONTENT_FREE_KINDS) == {"timeout", "rate_limit", "empty"}


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("result", [ORDER, FLIGHTS, [ORDER, ORDER], json.dumps(ORDER), 12345, 3.5, None, "",
                                    {"status": True}, "Directory created."])
def test_malformed_json_is_an_invalid_cut_prefix(result: Any, seed: int) -> None:
    shown = apply("malformed_json", result, seed)
    assert isinstance(shown, str) and shown.strip()
    assert not is_json(shown)
    if isinstance(result, dict | list):
        text = json.dumps(result, ensure_ascii=False)
        assert text.startswith(shown) and 0.25 * len(text) <= len(shown) < len(text)


def test_malformed_json_cut_point_depends_on_the_seed() -> None:
    cuts = {len(apply("malformed_json", ORDER, seed)) for seed in range(30)}
    assert len(cuts) > 5


def test_truncated_drops_latter_halves_recursively() -> None:
    shown = apply("truncated", ORDER)
    # 8 keys -> the first 4, in order; "customer" (4th) keeps its first 2 keys.
    assert list(shown) == ["order_id", "reference", "placed_on", "total"]
    assert shown["order_id"] == 12345 and shown["total"] == 149.99

    nested = {"a": 1, "b": {"x": 1, "y": 2, "z": 3}, "c": [1, 2, 3, 4, 5], "d": 4}
    assert apply("truncated", nested) == {"a": 1, "b": {"x": 1, "y": 2}}
    assert apply("truncated", [{"k1": 1, "k2": 2}, {"k1": 3, "k2": 4}, {"k1": 5}]) == [{"k1": 1}, {"k1": 3}]
    # Odd counts keep the larger half: 5 -> 3, 1 -> 1.
    assert apply("truncated", FLIGHTS)["travel_cost_list"] == [320.0, 410.5, 275.25]
    assert apply("truncated", {"only": [7]}) == {"only": [7]}


def test_truncated_json_text_stays_json_and_plain_text_is_halved() -> None:
    shown = apply("truncated", json.dumps(FLIGHTS))
    assert isinstance(shown, str) and json.loads(shown) == {"travel_cost_list": [320.0, 410.5, 275.25],
                                                            "departure_date": "2024-12-31"}
    assert apply("truncated", "abcdefgh") == "abcd"


def test_key_rename_renames_every_key_and_stringifies_numbers() -> None:
    state = EpisodeToolState(seed=5)
    shown = apply("key_rename", ORDER, state=state)
    assert set(shown).isdisjoint(ORDER)
    assert len(shown) == len(ORDER)
    assert shown[state.renames["order_id"]] == "12345"
    assert shown[state.renames["total"]] == "149.99"
    assert shown[state.renames["reference"]] == "ORD-0042"  # strings stay as they were
    customer = shown[state.renames["customer"]]
    assert customer[state.renames["vip"]] is True  # booleans are not numbers here
    item = shown[state.renames["items"]][0]
    r = state.renames
    assert item == {r["sku"]: "SKU-100", r["price"]: "19.99", r["qty"]: "2"}


def test_key_rename_persists_across_calls_of_an_episode() -> None:
    state = EpisodeToolState(seed=11)
    first = apply("key_rename", ORDER, seed=1, state=state)
    renames = dict(state.renames)
    second = apply("key_rename", {"order_id": 7, "status": "open", "carrier": "DHL"}, seed=2, state=state)
    assert second[renames["order_id"]] == "7" and second[renames["status"]] == "open"
    assert state.renames["carrier"] not in renames.values()
    assert {k: v for k, v in state.renames.items() if k in renames} == renames
    assert list(first) == [renames[k] for k in ORDER]


def test_key_rename_map_is_seeded_and_order_independent() -> None:
    a, b, c = EpisodeToolState(seed=3), EpisodeToolState(seed=3), EpisodeToolState(seed=4)
    apply("key_rename", ORDER, state=a)
    apply("key_rename", dict(reversed(list(ORDER.items()))), state=b)
    apply("key_rename", ORDER, state=c)
    assert a.renames == b.renames
    assert a.renames != c.renames
    assert len(set(a.renames.values())) == len(a.renames)  # injective: no two keys merge


def test_key_rename_on_json_text_and_plain_text() -> None:
    state = EpisodeToolState(seed=2)
    shown = apply("key_rename", json.dumps({"balance": 10.5}), state=state)
    assert json.loads(shown) == {state.renames["balance"]: "10.5"}
    assert apply("key_rename", "Logged in successfully", state=state) == "Logged in successfully"
    assert apply("key_rename", 42, state=state) == "42"


def _same_types(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same_types(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            any(_same_types(x, y) for y in b) for x in a)
    return type(a) is type(b)


@pytest.mark.parametrize("seed", range(25))
def test_wrong_value_keeps_types_and_keys_and_changes_values(seed: int) -> None:
    shown = apply("wrong_value", ORDER, seed)
    assert _same_types(ORDER, shown)
    assert key_paths(shown) == key_paths(ORDER)
    assert shown != ORDER
    # Numbers move by 1-10 %.
    assert 0.01 * 149.99 - 0.01 <= abs(shown["total"] - 149.99) <= 0.10 * 149.99 + 0.01
    # An integer id moves to a neighbour; string ids keep their prefix and zero padding.
    assert abs(shown["order_id"] - 12345) == 1
    assert shown["reference"] in ("ORD-0041", "ORD-0043")
    assert shown["customer"]["customer_id"] in ("CUST-006", "CUST-008")
    # ISO dates move by exactly one day.
    moved = dt.date.fromisoformat(shown["placed_on"]) - dt.date(2024, 3, 15)
    assert abs(moved.days) == 1
    # Untouchable values (plain words, booleans) stay.
    assert shown["status"] == "shipped" and shown["customer"]["vip"] is True


def test_wrong_value_swaps_array_elements() -> None:
    shown = apply("wrong_value", {"symbols": ["AAPL", "GOOG", "MSFT", "NVDA"]}, seed=4)
    assert sorted(shown["symbols"]) == sorted(["AAPL", "GOOG", "MSFT", "NVDA"])
    assert shown["symbols"] != ["AAPL", "GOOG", "MSFT", "NVDA"]
    assert sum(a != b for a, b in zip(shown["symbols"], ["AAPL", "GOOG", "MSFT", "NVDA"], strict=True)) == 2


def test_wrong_value_shifts_every_number_within_range() -> None:
    for seed in range(50):
        shown = apply("wrong_value", FLIGHTS, seed)
        assert dt.date.fromisoformat(shown["departure_date"]) in (dt.date(2024, 12, 30), dt.date(2025, 1, 1))
        assert abs(shown["booking_id"] - 3426812) == 1
        assert shown["note"] is None
        for before, after in zip(sorted(FLIGHTS["travel_cost_list"]), sorted(shown["travel_cost_list"]),
                                 strict=True):
            assert isinstance(after, float)
            # sorted pairing can cross neighbours only if shifts overlap; all gaps here exceed 20 %.
            assert 0.0099 <= abs(after - before) / before <= 0.1001


def test_wrong_value_on_json_text_keeps_it_json() -> None:
    shown = apply("wrong_value", json.dumps(FLIGHTS), seed=3)
    assert isinstance(shown, str)
    assert key_paths(json.loads(shown)) == key_paths(FLIGHTS)
    assert json.loads(shown) != FLIGHTS


@pytest.mark.parametrize("kind", TOOL_FAULT_KINDS)
def test_each_kind_is_deterministic_under_equal_seeds(kind: str) -> None:
    a = apply(kind, ORDER, seed=9, state=EpisodeToolState(seed=2))
    b = apply(kind, ORDER, seed=9, state=EpisodeToolState(seed=2))
    assert a == b


def test_bfcl_error_results_and_tuples_are_handled() -> None:
    err = {"error": "User not authenticated. Please log in to view account information."}
    assert apply("truncated", err) == err  # one key: nothing in the latter half
    shown = apply("wrong_value", ("2024-03-15", "2024-03-16"), seed=1)
    assert isinstance(shown, tuple) and len(shown) == 2


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(UnknownToolFault):
        apply("corrupt", ORDER)


def test_json_text_scalars_stay_json() -> None:
    shown = apply("wrong_value", json.dumps("2024-03-15"), seed=1)
    assert json.loads(shown) in ("2024-03-14", "2024-03-16")
    assert json.loads(apply("truncated", json.dumps("abcdefgh"))) == "abcd"
    assert json.loads(apply("key_rename", "42")) == "42"


def test_bytes_are_treated_as_utf8_text() -> None:
    raw = json.dumps(FLIGHTS).encode()
    assert json.loads(apply("truncated", raw))["travel_cost_list"] == [320.0, 410.5, 275.25]
    assert apply("empty", raw) == b""
    assert json.loads(apply("timeout", raw)) == {"error": "timeout"}
    with pytest.raises(UntransformableResult):
        apply("wrong_value", b"\xff\xfe")


def test_objects_that_are_not_data_get_only_content_free_kinds() -> None:
    gen = (i for i in range(3))
    assert apply("timeout", gen) == {"error": "timeout"}
    for kind in ("malformed_json", "truncated", "key_rename", "wrong_value"):
        with pytest.raises(UntransformableResult):
            apply(kind, gen)


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    choices = ["int", "float", "str", "date", "id", "bool", "none", "datetime"]
    if depth < 3:
        choices += ["dict", "dict", "list"]
    kind = rng.choice(choices)
    if kind == "dict":
        keys = rng.sample(["id", "name", "user_id", "amount", "created", "items", "meta", "Tags", "x-y", ""],
                          rng.randint(0, 5))
        return {k: _random_value(rng, depth + 1) for k in keys}
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 6))]
    return {
        "int": lambda: rng.randint(-10**6, 10**6), "float": lambda: rng.uniform(-1e4, 1e4),
        "str": lambda: rng.choice(["", "ok", "Ä ünïcode", "a\nb", "12.5"]),
        "date": lambda: f"20{rng.randint(10, 30)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "id": lambda: f"TCK-{rng.randint(0, 9999):04d}", "bool": lambda: rng.random() < 0.5,
        "none": lambda: None, "datetime": lambda: dt.datetime(2024, 3, 15, 8, 30),
    }[kind]()


@pytest.mark.parametrize("kind", TOOL_FAULT_KINDS)
def test_random_nested_results_never_break_a_kind(kind: str) -> None:
    rng = random.Random(2024)
    state = EpisodeToolState(seed=1)
    for i in range(150):
        value = {"result": _random_value(rng)} if i % 2 else _random_value(rng)
        if not isinstance(value, (dict, list, str, int, float, bool, type(None))):
            continue
        snapshot = repr(value)
        shown = apply_tool_fault(kind, value, rng=random.Random(i), state=state)
        assert repr(value) == snapshot
        if kind == "malformed_json":
            assert isinstance(shown, str) and not is_json(shown)
        elif isinstance(value, dict):
            assert isinstance(shown, dict)
        elif isinstance(value, list) and kind not in ("timeout", "rate_limit"):
            assert isinstance(shown, list)
