"""Simulated tokenisation and per-token logprobs for the simulated model server.

Entropy-based failure predictors need logprobs that behave like a real instruction model's: most
tokens nearly certain, a heavy tail of hesitant ones, top-20 lists that cover almost all of the
probability mass (the tool-response study measured a mean top-20 mass of 0.99997 and mean token
entropies of 0.05-0.08 nat). The distribution here is built so that its entropy grows with a
per-turn ``uncertainty`` the policy chooses, which lets predictors be tested on a signal that is
actually there. Everything is drawn from the ``random.Random`` passed in, so it is reproducible.
None of these numbers describe a real model.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from typing import Any

MAX_TOP_LOGPROBS = 20

# Words and punctuation first, each keeping the whitespace in front of it, so that joining the
# tokens gives back the text exactly (needed for cutting at max_tokens and for streaming).
_TOKEN_RE = re.compile(r"\s*\w+|\s*[^\s\w]|\s+")

_FILLER = (
    " the", " a", " to", " of", " and", " in", " is", " for", " on", " with", " I", " it", " that",
    " this", " be", " at", " as", " by", " from", " or", " an", " will", " can", " not", " are",
    ",", ".", ":", "\n", " (", '"', "{", "}", " -", " 1", " 2", " 0", " The", " city", " value",
)


def tokenize(text: str | None) -> list[str]:
    """Split text into whitespace/punctuation tokens whose concatenation is the text."""
    if not text:
        return []
    return _TOKEN_RE.findall(text)


def count_tokens(text: str | None) -> int:
    return len(tokenize(text))


def _alternatives(token: str, n: int, rng: random.Random) -> list[str]:
    """Plausible distinct alternative tokens: variants of the chosen token, then filler words."""
    stripped = token.strip()
    lead = token[: len(token) - len(token.lstrip())]
    variants = [stripped, " " + stripped, lead + stripped.lower(), lead + stripped.upper(),
                lead + stripped.capitalize(), lead + stripped[:-1] if len(stripped) > 1 else "",
                lead + stripped + "s", "\n" + stripped]
    pool = list(_FILLER)
    rng.shuffle(pool)
    out: list[str] = []
    seen = {token}
    for cand in variants[: rng.randint(1, 4)] + pool:
        if cand and cand not in seen:
            seen.add(cand)
            out.append(cand)
        if len(out) == n:
            return out
    i = 0
    while len(out) < n:  # only reached for very large n; keeps the list distinct
        cand = f" tok{i}"
        if cand not in seen:
            seen.add(cand)
            out.append(cand)
        i += 1
    return out


def token_distribution(uncertainty: float, rng: random.Random, k: int = MAX_TOP_LOGPROBS
                       ) -> tuple[list[float], float]:
    """Probabilities of the k most likely tokens (descending) and the mass left outside them.

    The mass not on the top token ("doubt") is log-normal with a median that rises steeply with
    uncertainty, giving the heavy-tailed per-token entropy real models show. The doubt is spread
    geometrically over the runners-up, with a small share beyond the top k.
    """
    u = min(1.0, max(0.0, uncertainty))
    log10_doubt = rng.gauss(-3.7 + 4.0 * u, 1.1)
    doubt = min(0.8, max(1e-6, 10.0 ** log10_doubt))
    ratio = rng.uniform(0.2, 0.6)
    outside = doubt * rng.uniform(0.0005, 0.01)
    inside = doubt - outside
    weights = [ratio ** i for i in range(max(0, k - 1))]
    total = sum(weights) or 1.0
    probs = sorted([1.0 - doubt] + [inside * w / total for w in weights], reverse=True)
    return probs[:k], outside


def entropy_of(probs: Sequence[float]) -> float:
    """Entropy in nats of the listed probabilities (the missing mass is ignored, as predictors do)."""
    return -sum(p * math.log(p) for p in probs if p > 0.0)


def _entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def token_logprobs(tokens: Sequence[str], uncertainty: float, rng: random.Random, top_k: int = 0
                   ) -> list[dict[str, Any]]:
    """OpenAI ``logprobs.content`` entries for tokens the policy has already chosen.

    Each token is treated as sampled from its simulated distribution at temperature 1, so now and
    then the emitted token is a runner-up with a lower logprob, as with real sampling.
    """
    top_k = max(0, min(MAX_TOP_LOGPROBS, int(top_k)))
    out = []
    for token in tokens:
        probs, _ = token_distribution(uncertainty, rng, MAX_TOP_LOGPROBS)
        r = rng.random()
        rank, acc = 0, 0.0
        for i, p in enumerate(probs):
            acc += p
            if r < acc:
                rank = i
                break
        alts = _alternatives(token, len(probs) - 1, rng)
        names = alts[:rank] + [token] + alts[rank:]
        entry = _entry(token, math.log(probs[rank]))
        entry["top_logprobs"] = [_entry(names[i], math.log(probs[i])) for i in range(top_k)]
        out.append(entry)
    return out
