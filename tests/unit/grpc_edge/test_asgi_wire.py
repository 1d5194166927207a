"""The gRPC wire the carried server writes and reads by hand
(a2a_grpc/grpc_edge/asgi/wire.py)."""

from __future__ import annotations

import base64
import gzip
import zlib
from urllib.parse import unquote

import pytest

from a2a_grpc.grpc_edge.asgi import wire


@pytest.mark.parametrize(("header", "seconds"), [
    (b"1S", 1.0), (b"250m", 0.25), (b"3M", 180.0), (b"2H", 7200.0), (b"100u", 1e-4),
    (b"99999999n", 0.099999999)])
def test_grpc_timeout_units(header: bytes, seconds: float) -> None:
    assert wire.timeout_of(header) == pytest.approx(seconds)


@pytest.mark.parametrize("header", [b"", b"S", b"1", b"1s", b"-1S", b"123456789S", b"1.5S"])
def test_a_malformed_timeout_is_none(header: bytes) -> None:
    assert wire.timeout_of(header) is None


def test_messages_are_length_prefixed_and_may_be_compressed() -> None:
    body = wire.framed(b"one") + wire.framed(b"")
    squeezed = gzip.compress(b"three")
    body += wire.PREFIX.pack(1, len(squeezed)) + squeezed
    assert wire.messages(body, "gzip") == [b"one", b"", b"three"]
    deflated = zlib.compress(b"four")
    assert wire.messages(wire.PREFIX.pack(1, len(deflated)) + deflated, "deflate") == [b"four"]


@pytest.mark.parametrize(("body", "encoding", "code"), [
    (b"\x00\x00\x00", None, wire.INTERNAL),  # a prefix cut short
    (wire.PREFIX.pack(0, 10) + b"short", None, wire.INTERNAL),
    (wire.PREFIX.pack(1, 3) + b"abc", None, wire.UNIMPLEMENTED),  # compressed, no encoding
    (wire.PREFIX.pack(1, 3) + b"abc", "snappy", wire.UNIMPLEMENTED),
    (wire.PREFIX.pack(1, 3) + b"abc", "gzip", wire.INTERNAL),  # not gzip at all
    (wire.PREFIX.pack(0, wire.MAX_RECEIVE + 1), None, wire.RESOURCE_EXHAUSTED),
])
def test_what_the_wire_refuses(body: bytes, encoding: str | None, code: int) -> None:
    with pytest.raises(wire.WireError) as info:
        wire.messages(body, encoding)
    assert info.value.code == code


def test_a_small_body_is_not_inflated_past_the_limit() -> None:
    bomb = gzip.compress(b"\0" * (wire.MAX_RECEIVE + 1))
    assert len(bomb) < 10_000
    with pytest.raises(wire.WireError) as info:
        wire.messages(wire.PREFIX.pack(1, len(bomb)) + bomb, "gzip")
    assert info.value.code == wire.RESOURCE_EXHAUSTED


def test_metadata_in_and_out() -> None:
    raw = b"\x00\xffbinary"
    headers = [(b":path", b"/x"), (b"content-type", b"application/grpc"), (b"te", b"trailers"),
               (b"grpc-timeout", b"1S"), (b"a2a-version", b"1.0"),
               (b"trace-bin", base64.b64encode(raw).rstrip(b"="))]
    assert wire.metadata_of(headers) == (("a2a-version", "1.0"), ("trace-bin", raw))
    assert wire.as_headers([("a2a-extensions", "x"), ("details-bin", raw)]) == [
        (b"a2a-extensions", b"x"), (b"details-bin", base64.b64encode(raw).rstrip(b"="))]


def test_the_status_message_is_percent_encoded() -> None:
    message = "task 'é' 100% not found\n"
    trailers = dict(wire.status_trailers(5, message, None))
    assert trailers[b"grpc-status"] == b"5"
    encoded = trailers[b"grpc-message"]
    assert all(0x20 <= b <= 0x7E for b in encoded)
    assert unquote(encoded.decode()) == message
