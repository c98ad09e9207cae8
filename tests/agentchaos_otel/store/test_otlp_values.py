"""The receiver's one-walk decode of OTLP protobuf values equals decoding, then cleaning."""

from __future__ import annotations

import base64
import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList

from agentchaos_otel.store.exporter import clean_attributes
from agentchaos_otel.store.receivers import otlp_http as otlp_receiver

_KEYS = st.sampled_from(["gen_ai.request.model", "authorization", "x-api-key", "api_key", "token",
                         "input_tokens", "Cookie", "k", "", "nested.secret", "password"])
_SCALARS = st.one_of(st.none(), st.text(max_size=8), st.integers(-2**63, 2**63 - 1), st.booleans(),
                     st.floats(allow_nan=True, allow_infinity=True), st.binary(max_size=6))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)), max_leaves=8)


def _any(v: Any) -> AnyValue:
    if v is None:
        return AnyValue()
    if isinstance(v, bool):
        return AnyValue(bool_value=v)
    if isinstance(v, int):
        return AnyValue(int_value=v)
    if isinstance(v, float):
        return AnyValue(double_value=v)
    if isinstance(v, bytes):
        return AnyValue(bytes_value=v)
    if isinstance(v, str):
        return AnyValue(string_value=v)
    if isinstance(v, list):
        return AnyValue(array_value=ArrayValue(values=[_any(x) for x in v]))
    return AnyValue(kvlist_value=KeyValueList(values=[KeyValue(key=k, value=_any(x)) for k, x in v.items()]))


def _plain(v: AnyValue) -> Any:
    """OTLP's value model decoded as it is, without cleaning (the reference)."""
    which = v.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_plain(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _plain(kv.value) for kv in v.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(v.bytes_value).decode("ascii")
    return getattr(v, which)


@settings(max_examples=int(os.environ.get("AGENTCHAOS_FUZZ_EXAMPLES", "0") or 0) or 150, deadline=None)
@given(attrs=st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_protobuf_attributes_come_out_as_clean_attributes_would_leave_them(attrs: dict[str, Any]) -> None:
    kvs = [KeyValue(key=k, value=_any(v)) for k, v in attrs.items()]
    reference = clean_attributes({kv.key: _plain(kv.value) for kv in kvs})
    assert otlp_receiver._pb_attrs(kvs) == reference
