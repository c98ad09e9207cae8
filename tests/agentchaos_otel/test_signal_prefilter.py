"""The substring pre-check in front of the error-form regexes never changes what they find.

``signals.error_markers`` skips a pattern when none of the literal strings every match must
contain occurs in the text (folded: lower-cased, with the few non-ASCII characters that match an
ASCII letter when case is ignored written as that letter). The reference here runs every
pattern on every text, as the function did before the pre-check; both must agree on texts made
of the patterns' own words, in any case, around characters whose case folding is special.
``signals.unicode_anomaly`` judges each distinct non-ASCII character once; the reference judges
every character, as it did before.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from agentchaos_otel import signals

_EXAMPLES = int(os.environ.get("AGENTCHAOS_FUZZ_EXAMPLES", "0") or 0) or 400

# Pieces of the forms' alternatives, near misses, and characters that fold oddly under re.I
# (Kelvin sign, long s, dotted and dotless i) or are not ASCII at all.
_PIECES = ["rate limit", "rate-limit", "too many requests", "quota exceeded", "throttl", "429", "exceeded your quota",
           "insufficient_quota", "resource exhausted", "timed out", "time-out", "deadline exceeded",
           "connection reset", "did not respond", "no response from", "504", "service unavailable",
           "overloaded", "bad gateway", "upstream error", "server error", "internal error", "502", "500",
           "content filter", "content_policy", "has been filtered", "flagged by", "moderation", "[RATE LIMIT]",
           "error:", "Exception ", "traceback", "fatal ", "<html>", "<!doctype html>", "HTTP/1.1 503",
           "HTTP 429", "404 not found", '{"error": "x"}', '{"detail": 1}', "answer", "the", " ", "\n", ".",
           "\u212a", "\u017f", "\u0130", "\u0131", "\u00e9", "\u2014", "SERVİCE", "ſerver"]


def _reference(text: str | None) -> list[str]:
    if not text:
        return []
    head = text[:2000]
    found = [label for label, pattern in signals._STRONG_PATTERNS if pattern.search(head)]
    if "provider_json" not in found and signals._error_object(text):
        found.append("provider_json")
    start = text[:signals._WORD_WINDOW]
    return found + [label for label, pattern in signals._WORD_PATTERNS if pattern.search(start)]


_case = st.sampled_from([str, str.upper, str.lower, str.title, str.swapcase])
_piece = st.tuples(st.sampled_from(_PIECES), _case).map(lambda pc: pc[1](pc[0]))
_texts = st.one_of(st.lists(_piece, max_size=12).map("".join), st.text(max_size=80))


@settings(max_examples=_EXAMPLES, deadline=None)
@given(_texts)
def test_the_pre_check_agrees_with_running_every_pattern(text: str) -> None:
    assert signals.error_markers(text) == _reference(text)


def test_every_form_has_a_pre_check_and_known_texts_still_match() -> None:
    assert all(form.needles for form in signals._STRONG_FORMS + signals._WORD_FORMS)
    assert signals.error_markers("HTTP/1.1 503 Service Unavailable") == _reference("HTTP/1.1 503 Service Unavailable")
    assert "rate_limit" in signals.error_markers("Rate limit reached for requests")
    assert signals.error_markers("The capital of France is Paris.") == []


def test_fold_knows_every_character_that_matches_an_ascii_letter_when_case_is_ignored() -> None:
    letter = re.compile("[a-z]", re.IGNORECASE)
    matching = {chr(c) for c in range(128, sys.maxunicode + 1) if letter.fullmatch(chr(c))}
    assert matching == set(signals._FOLD_TO_ASCII_CHARS)
    for ch in matching:
        assert re.fullmatch(signals.fold(ch), ch, re.IGNORECASE)


def _anomaly_reference(text: str | None) -> float:
    if not text:
        return 0.0
    odd = 0
    for ch in text:
        if ch in "\n\r\t":
            continue
        cat = unicodedata.category(ch)
        if cat in ("So", "Co", "Cn", "Cc", "Cs") or ch == "\ufffd" or "\u2600" <= ch <= "\u27bf":
            odd += 1
        elif cat == "Cf" and ch != "\u200d":
            odd += 1
    return (odd + signals._mixed_script_letters(text)) / len(text)


_ODD = ["\u00b0", "\u2019", "\u201c", "\u2014", "\u00e9", "\U0001f600", "\u2600", "\u2713", "\u200b", "\u200d",
        "\ufffd", "\ue000", "\u0378", "\x01", "\x7f", "\t", "\n", "\u041e", "\u043e", "\u0391", "\u03b1",
        "\u4e2d", "Oslo", "\u041eslo", "word", " ", "42"]


@settings(max_examples=_EXAMPLES, deadline=None)
@given(st.one_of(st.lists(st.sampled_from(_ODD), max_size=30).map("".join), st.text(max_size=80)))
def test_unicode_anomaly_agrees_with_judging_every_character(text: str) -> None:
    assert signals.unicode_anomaly(text) == _anomaly_reference(text)
