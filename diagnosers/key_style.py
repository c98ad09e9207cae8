"""Naming conventions of result keys: an API keeps one, so a result that breaks it was rewritten.

Pure functions of a key, cached: the same few keys recur in every result of every episode.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from agentchaos_otel import vocabulary

_CAMEL_RE = re.compile(r"[a-z0-9][A-Z]|^[A-Z][a-z]")


_WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_VOWELS = frozenset("aeiouy")
# Vowel-free words that are ordinary in key names (protocols, formats, units).
_COMMON_CONSONANT_WORDS = frozenset({"http", "https", "html", "xhtml", "sftp", "ftps", "smtp", "ssh", "pwd",
                                     "cwd", "msg", "src", "dst", "ctx", "cfg", "xml", "csv", "pdf", "sql",
                                     "dns", "tls", "ssl", "rgb", "kph", "mph", "kwh", "nm", "cm", "mm",
                                     "km", "kg", "mb", "gb", "kb", "tb", "std", "pct", "qty", "txn", "gps", "txt",
                                     "tmp", "png", "jpg", "svg", "bmp", "gz", "tgz", "rpm", "dpi"})


def abbreviated_words(key: str) -> list[str]:
    """Words of a key written without vowels (``rslt``, ``cntnt``): a key set abbreviated on the way,
    when the rest of the episode spells its keys out."""
    return list(_abbreviated(key))


@lru_cache(maxsize=1 << 16)
def _abbreviated(key: str) -> tuple[str, ...]:
    out = []
    for w in (m.lower() for m in _WORD_RE.findall(key)):
        initial_vowel = w[0] in _VOWELS  # abbreviations keep a leading vowel: offset -> offst
        rest = w[1:] if initial_vowel else w
        if (len(w) >= (5 if initial_vowel else 3) and not (_VOWELS & set(rest))
                and w not in _COMMON_CONSONANT_WORDS):
            out.append(w)
    return tuple(out)


@lru_cache(maxsize=1 << 16)  # bounded: keys come from tool results, which a fault may rewrite
def key_style(key: str) -> str:
    """Naming convention of one key: 'upper' (DATA_SOURCE), 'camel' (dataSource/DataSource), 'kebab'
    (data-source), 'abbrev' (vowel-free words: rslt_cntnt), 'snake' (data_source, city) or 'other'
    (no letters). APIs keep one convention."""
    if not any(c.isalpha() for c in key):
        return "other"
    if key.isupper():  # short acronyms (ID, URL, MA(20)) are ordinary in any convention
        return "upper" if sum(c.isalpha() for c in key) >= 4 else "other"
    if _CAMEL_RE.search(key):
        return "camel"
    if "-" in key:
        return "kebab"
    if _abbreviated(key):
        return "abbrev"
    return "snake"


def odd_style_keys(keys: tuple[str, ...] | None, norm: Counter[str]) -> list[str]:
    """Keys written in a convention that never occurs in ``norm`` (style counts of other results).
    A listing's own members (``hasMore``, ``nextPageToken``) are left out: paging envelopes often
    keep another convention than the records they carry."""
    return [k for k in keys or () if (st := key_style(k)) in ("upper", "camel", "kebab", "abbrev")
            and norm[st] == 0 and not vocabulary.listing_key(k)]
