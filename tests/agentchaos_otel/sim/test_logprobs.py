"""Simulated tokenisation and logprobs: exact round trips and a distribution predictors can read."""

from __future__ import annotations

import math
import random

import pytest

from agentchaos_otel.sim.logprobs import (
    MAX_TOP_LOGPROBS,
    count_tokens,
    entropy_of,
    token_distribution,
    token_logprobs,
    tokenize,
)


@pytest.mark.parametrize("text", [
    "Hello, world!", "  leading and trailing  ", '{"city": "São Paulo", "t": -3.5}', "a\n\nb\tc", "°C … ✓",
    "", "x",
])
def test_tokens_join_back_to_the_text(text: str) -> None:
    assert "".join(tokenize(text)) == text
    assert count_tokens(text) == len(tokenize(text))


def test_random_texts_round_trip() -> None:
    rng = random.Random(0)
    alphabet = "ab Z9_.,;:{}[]\"'\n\t-+éß漢字☃ "
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert "".join(tokenize(text)) == text


def test_words_and_punctuation_are_separate_tokens() -> None:
    assert tokenize('It is 21.3 C.') == ["It", " is", " 21", ".", "3", " C", "."]
    assert count_tokens(None) == 0


def test_distribution_is_sorted_and_leaves_mass_outside() -> None:
    rng = random.Random(1)
    for u in (0.0, 0.1, 0.5, 1.0):
        for _ in range(200):
            probs, outside = token_distribution(u, rng)
            assert len(probs) == MAX_TOP_LOGPROBS
            assert probs == sorted(probs, reverse=True)
            assert outside > 0 and sum(probs) < 1.0
            assert math.isclose(sum(probs) + outside, 1.0, rel_tol=1e-9)


def _mean_entropy(u: float, n: int = 3000) -> tuple[float, float]:
    rng = random.Random(7)
    h, mass = 0.0, 0.0
    for _ in range(n):
        probs, _ = token_distribution(u, rng)
        h += entropy_of(probs)
        mass += sum(probs)
    return h / n, mass / n


def test_entropy_grows_with_uncertainty_and_is_realistic_when_calm() -> None:
    levels = [_mean_entropy(u) for u in (0.05, 0.1, 0.3, 0.6, 0.9)]
    entropies = [h for h, _ in levels]
    assert entropies == sorted(entropies)
    assert 0.01 < entropies[1] < 0.1  # the study measured ~0.05 nat per token for a calm model
    assert levels[1][1] > 0.9999  # and a top-20 mass of ~0.99997


def test_logprob_entries_are_seeded_and_well_formed() -> None:
    tokens = tokenize("The answer is 42, in Lisbon.")
    a = token_logprobs(tokens, 0.4, random.Random(3), top_k=20)
    b = token_logprobs(tokens, 0.4, random.Random(3), top_k=20)
    assert a == b
    assert a != token_logprobs(tokens, 0.4, random.Random(4), top_k=20)
    for tok, e in zip(tokens, a, strict=True):
        assert e["token"] == tok and e["bytes"] == list(tok.encode())
        assert e["logprob"] <= 0
        alts = [t["token"] for t in e["top_logprobs"]]
        assert len(alts) == len(set(alts)) == 20 and tok in alts
    assert all(e["top_logprobs"] == [] for e in token_logprobs(tokens, 0.4, random.Random(3), top_k=0))
    assert len(token_logprobs(tokens, 0.4, random.Random(3), top_k=99)[0]["top_logprobs"]) == 20


def test_uncertain_turns_sometimes_emit_a_runner_up() -> None:
    tokens = ["tok"] * 400
    calm = token_logprobs(tokens, 0.05, random.Random(0), top_k=5)
    unsure = token_logprobs(tokens, 0.9, random.Random(0), top_k=5)

    def not_top(entries: list[dict]) -> int:
        return sum(1 for e in entries if e["top_logprobs"][0]["token"] != e["token"])

    assert not_top(calm) < not_top(unsure)
    assert not_top(unsure) > 20
