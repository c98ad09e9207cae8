"""Bounded decoding: round trips, corrupt input, and a gzip bomb that must not be materialised."""

from __future__ import annotations

import gzip
import io
import tracemalloc
import zlib

import pytest

from agentchaos_otel.content_encoding import TooLarge, UnsupportedEncoding, bounded_decompress

pytestmark = pytest.mark.reliability

DATA = b"The weather in Paris is sunny. " * 4000


def _raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


@pytest.mark.parametrize(("encoded", "encoding"), [
    (gzip.compress(DATA), "gzip"),
    (gzip.compress(DATA), "X-GZIP"),
    (gzip.compress(DATA[:100]) + gzip.compress(DATA[100:]), "gzip"),  # two members
    (gzip.compress(DATA) + b"\x00" * 8, "gzip"),  # zero padding after the member
    (zlib.compress(DATA), "deflate"),
    (_raw_deflate(DATA), "deflate"),
    (DATA, ""),
    (DATA, "identity"),
    (gzip.compress(gzip.compress(DATA)), "gzip, gzip"),
])
def test_round_trip_matches_the_stdlib(encoded: bytes, encoding: str) -> None:
    assert bounded_decompress(encoded, encoding, len(DATA)) == DATA


def test_empty_body_decodes_to_empty() -> None:
    assert bounded_decompress(b"", "gzip", 0) == b""


@pytest.mark.parametrize(("encoded", "encoding"), [
    (gzip.compress(DATA)[:-12], "gzip"),      # truncated
    (gzip.compress(DATA)[:6], "gzip"),        # header only
    (b"definitely not gzip", "gzip"),
    (gzip.compress(DATA) + b"trailing junk", "gzip"),
    (b"\xff\xfe\xfd not deflate", "deflate"),
])
def test_corrupt_input_is_a_value_error(encoded: bytes, encoding: str) -> None:
    with pytest.raises(ValueError) as info:
        bounded_decompress(encoded, encoding, 10 * len(DATA))
    assert not isinstance(info.value, TooLarge)


def test_unsupported_coding_is_named() -> None:
    with pytest.raises(UnsupportedEncoding, match="br"):
        bounded_decompress(b"\x1b\x03", "br", 100)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "identity"])
def test_one_byte_over_the_limit_is_too_large(encoding: str) -> None:
    encoded = {"gzip": gzip.compress, "deflate": zlib.compress, "identity": bytes}[encoding](DATA)
    assert bounded_decompress(encoded, encoding, len(DATA)) == DATA
    with pytest.raises(TooLarge):
        bounded_decompress(encoded, encoding, len(DATA) - 1)


def _gzip_bomb(expanded: int) -> bytes:
    """Gzip members of 1 MiB of zeros back to back: about 1 KiB per expanded MiB, built in milliseconds."""
    member = gzip.compress(b"\x00" * (1 << 20), compresslevel=9)
    return member * (expanded >> 20)


def _single_stream_bomb(expanded: int) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as out:
        for _ in range(expanded >> 20):
            out.write(b"\x00" * (1 << 20))
    return buf.getvalue()


@pytest.mark.parametrize("bomb", [
    pytest.param(lambda: _gzip_bomb(1 << 30), id="1GiB-multi-member"),
    pytest.param(lambda: _single_stream_bomb(64 << 20), id="64MiB-one-stream"),
])
def test_gzip_bomb_never_expands_past_the_bound(bomb: object) -> None:
    """A gzip body expanding to far more than the limit: decoding stops there (memory, not time)."""
    data = bomb()  # type: ignore[operator]
    assert len(data) < 2 << 20
    limit = 8 << 20
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge):
            bounded_decompress(data, "gzip", limit)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the output buffer up to the limit, its growth slack and one decoding step; gzip.decompress
    # would have allocated everything
    assert peak < limit * 1.5
