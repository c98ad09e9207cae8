"""Bounded decoding of ``Content-Encoding`` bodies that arrive from outside the process.

A compressed body says nothing trustworthy about its expanded size: a 1 MiB gzip body can expand
to 1 GiB. ``gzip.decompress`` materialises all of it, so anything that decodes untrusted input
(the injector reading a provider's answer, the OTLP receiver reading an exporter's request) goes
through ``bounded_decompress``, which stream-decompresses with ``max_length`` and stops as soon as
the output would pass the limit: the decoded bytes held at any time stay within the limit plus
one 64 KiB step.

Stdlib only, so every layer of the package may use it.
"""

from __future__ import annotations

import io
import zlib


class TooLarge(Exception):
    """The decoded body would exceed the caller's limit; decoding stopped at the limit.

    Deliberately not a ``ValueError``: callers treat "too large" (fail open, answer 413) and
    "corrupt" (skip, answer 400) differently, and one ``except ValueError`` must not catch both.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(f"decoded body exceeds the {limit}-byte limit")
        self.limit = limit


class UnsupportedEncoding(ValueError):
    """A content-coding this module does not decode (``br``, ``zstd``, ...)."""


_GZIP_WBITS = 16 + zlib.MAX_WBITS
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_DEFLATE_WBITS = -zlib.MAX_WBITS
_STEP = 64 * 1024  # bytes fed to / taken from zlib per call: keeps every piece small beside the result


def _inflate(data: memoryview, wbits: int, out: io.BytesIO, limit: int) -> int:
    """Decode one zlib/gzip/raw-deflate stream into ``out``; returns where in ``data`` it ended.

    Input is fed in slices and output taken in steps, so neither the expanded body beyond the
    limit nor copies of the compressed input ever exist; ``out`` is shared by the members of a
    multi-member gzip body, so the bound holds for their sum.
    """
    decoder = zlib.decompressobj(wbits)
    pos = 0
    pending: bytes | memoryview = b""
    try:
        while not decoder.eof:
            if not pending and pos < len(data):
                pending = data[pos:pos + _STEP]
                pos += len(pending)
            before = len(pending)
            piece = decoder.decompress(pending, min(limit - out.tell() + 1, _STEP))
            if out.tell() + len(piece) > limit:
                raise TooLarge(limit)
            out.write(piece)
            pending = decoder.unconsumed_tail
            if not piece and len(pending) == before and (pending or pos >= len(data)):
                raise ValueError("truncated compressed body")
    except zlib.error as exc:
        raise ValueError(f"corrupt compressed body: {exc}") from None
    # at the end of the stream zlib puts the input left over in unused_data (and, when output was
    # capped, a copy of it in unconsumed_tail): what follows the stream is the last len(unused_data)
    return pos - len(decoder.unused_data)


def _only_zeros(data: memoryview) -> bool:
    return all(not data[i:i + _STEP].tobytes().strip(b"\x00") for i in range(0, len(data), _STEP))


def _gunzip(data: bytes, limit: int) -> bytes:
    """gzip allows several members back to back (and trailing zero padding), like gzip.decompress."""
    out = io.BytesIO()  # getvalue() hands its buffer over: no second copy of a large result
    rest = memoryview(data)
    while True:
        rest = rest[_inflate(rest, _GZIP_WBITS, out, limit):]
        if not rest or (rest[0] == 0 and _only_zeros(rest)):
            return out.getvalue()


def _inflate_deflate(data: bytes, limit: int) -> bytes:
    """HTTP ``deflate`` is meant to be zlib-wrapped, but servers also send raw deflate."""
    out = io.BytesIO()
    try:
        _inflate(memoryview(data), _ZLIB_WBITS, out, limit)
    except TooLarge:
        raise
    except ValueError:
        out = io.BytesIO()
        _inflate(memoryview(data), _RAW_DEFLATE_WBITS, out, limit)
    return out.getvalue()


def _decode_one(data: bytes, coding: str, limit: int) -> bytes:
    if not data and coding in ("", "identity", "gzip", "x-gzip", "deflate"):
        return b""  # an empty body (204, HEAD) carries no compressed stream at all
    if coding in ("", "identity"):
        if len(data) > limit:
            raise TooLarge(limit)
        return data
    if coding in ("gzip", "x-gzip"):
        return _gunzip(data, limit)
    if coding == "deflate":
        return _inflate_deflate(data, limit)
    raise UnsupportedEncoding(f"unsupported content-encoding {coding!r}")


def bounded_decompress(data: bytes, encoding: str, limit: int) -> bytes:
    """Decode ``data`` per a ``Content-Encoding`` header value, never producing more than ``limit`` bytes.

    ``encoding`` may list several codings (``"gzip, identity"``); they are undone last-applied
    first, each bounded by ``limit``. The result is never longer than ``limit``, identity included.

    Raises ``TooLarge`` when the decoded body would exceed ``limit``, ``UnsupportedEncoding`` (a
    ``ValueError``) for a coding other than gzip/x-gzip/deflate/identity, and ``ValueError`` for
    corrupt or truncated input.
    """
    if limit < 0:
        raise ValueError("limit must be >= 0")
    codings = [c.strip().lower() for c in encoding.split(",")] if encoding.strip() else [""]
    for coding in reversed(codings):
        data = _decode_one(data, coding, limit)
    return data
