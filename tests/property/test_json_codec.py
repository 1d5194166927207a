"""bridge.codec reads and writes JSON with orjson where it agrees with the
standard json module, and with json elsewhere: the results are json's."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_grpc.bridge import codec

SETTINGS = settings(max_examples=300, deadline=None)
STANDARD = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

texts = st.text(max_size=8) | st.sampled_from(["\u2028", "\x00\x1f", "é😀", '"\\'])
integers = st.integers(-2**70, 2**70) | st.sampled_from([2**63, 2**64, -2**63 - 1, 2**64 - 1])
finite = st.floats(allow_nan=False, allow_infinity=False)


def values(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(texts, inner, max_size=3), max_leaves=10)


@SETTINGS
@given(values(st.none() | st.booleans() | integers | texts | finite))
def test_decoding_gives_what_json_gives(value: Any) -> None:
    body = STANDARD(value).encode()
    assert codec._decode(body) == json.loads(body)


@SETTINGS
@given(st.binary(max_size=24) | st.sampled_from([
    b"NaN", b"-Infinity", b'"\\ud800"', b"\xef\xbb\xbf{}", '{"a":1}'.encode("utf-16"),
    b"123456789012345678901234567890", b"[1e400]", b"{'a':1}", b"[1,]"]))
def test_any_bytes_decode_as_json_decodes_them(body: bytes) -> None:
    try:
        expected: Any = json.loads(body)
    except (ValueError, RecursionError) as exc:
        expected = type(exc)
    try:
        got: Any = codec._decode(body)
    except (ValueError, RecursionError) as exc:
        got = type(exc)
    if isinstance(expected, float) and math.isnan(expected):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == expected


@SETTINGS
@given(values(st.none() | st.booleans() | integers | texts)
       | st.dictionaries(st.integers(), st.integers(), max_size=2))
def test_encoding_writes_the_bytes_json_writes(value: Any) -> None:
    assert codec.dumps(value) == STANDARD(value).encode()


@SETTINGS
@given(values(finite))
def test_floats_encode_to_the_same_numbers(value: Any) -> None:
    assert json.loads(codec.dumps(value)) == json.loads(STANDARD(value))
