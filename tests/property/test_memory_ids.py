"""The memory store's id packing is exact: any bytes, any ids, including ids
that hold the escape byte or a token's bytes, come back byte for byte."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_grpc.stores.memory_rows import (
    _pack_ids,
    _pack_tokens,
    _substitutable,
    _token_id,
    _unpack_ids,
)

ids = st.text(max_size=12).map(str.encode) | st.binary(max_size=12) | st.sampled_from(
    [b"", b"\xff", b"\xff\x01", b"\x01", b"\x00\xff", b"task-1", b"c"])


@st.composite
def content(draw: st.DrawFn, tid: bytes, cid: bytes) -> bytes:
    """Bytes mixing the ids, escape-like sequences and noise."""
    pieces = st.sampled_from([tid, cid, b"\xff", b"\xff\x00", b"\xff\x01", b"\xff\x02",
                              b"\x00", b"\x01", b"\x02"]) | st.binary(max_size=6)
    return b"".join(draw(st.lists(pieces, max_size=16)))


@settings(max_examples=400, deadline=None)
@given(st.data(), ids, ids)
def test_round_trip(data: st.DataObject, tid: bytes, cid: bytes) -> None:
    raw = data.draw(content(tid, cid))
    packed = _pack_ids(raw, tid, cid)
    assert _unpack_ids(packed, tid, cid) == raw


def test_ids_become_tokens() -> None:
    raw = b"\x0a\x06task-1\x12\x03ctx\x1a\x06task-1\xff"
    packed = _pack_ids(raw, b"task-1", b"ctx")
    assert packed == b"\x0a\x06\xff\x01\x12\x03\xff\x02\x1a\x06\xff\x01\xff\x00"
    assert _unpack_ids(packed, b"task-1", b"ctx") == raw


@settings(max_examples=300, deadline=None)
@given(st.data(), st.text(max_size=12), st.text(max_size=12))
def test_str_ids_as_rows_pack_them(data: st.DataObject, task_id: str, context_id: str) -> None:
    """A row's ids come as str: those that may become tokens are found without
    the regular expression, and the rest are left as they are; either way the
    row unpacks to what was packed."""
    tid, cid = task_id.encode(), context_id.encode()
    raw = data.draw(content(tid, cid))
    assert _token_id(task_id) == (tid if _substitutable(tid) else b"")
    packed = _pack_tokens(raw, _token_id(task_id), _token_id(context_id))
    assert _unpack_ids(packed, tid, cid) == raw
