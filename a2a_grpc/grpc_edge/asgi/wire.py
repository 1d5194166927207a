"""The gRPC wire over HTTP/2, as grpc/grpc's protocol document says it:
length-prefixed messages, the `grpc-timeout` header, metadata (`-bin`
values in base64), `grpc-status` and a percent-encoded `grpc-message` in
the trailers."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Iterable, Sequence

PREFIX = struct.Struct(">BI")  # compressed flag, length
MAX_RECEIVE = 4 * 1024 * 1024  # grpc.aio's default for a received message
CONTENT_TYPE = (b"content-type", b"application/grpc")
ACCEPTED = (b"grpc-accept-encoding", b"identity,gzip,deflate")
# Headers that are the wire's, not the call's metadata (what grpc.aio leaves out too).
NOT_METADATA = frozenset({"content-type", "te", "grpc-timeout", "grpc-encoding",
                          "grpc-accept-encoding", "content-length", "host"})
UNITS = {b"H": 3600.0, b"M": 60.0, b"S": 1.0, b"m": 1e-3, b"u": 1e-6, b"n": 1e-9}
WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}  # gzip and zlib headers
Header = tuple[bytes, bytes]


class WireError(Exception):
    """A request the wire refuses: its gRPC status code and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


INTERNAL, UNIMPLEMENTED, RESOURCE_EXHAUSTED = 13, 12, 8


def timeout_of(value: bytes) -> float | None:
    """Seconds from `grpc-timeout` (at most 8 digits and a unit); None if malformed."""
    unit = UNITS.get(value[-1:])
    digits = value[:-1]
    if unit is None or not digits.isdigit() or len(digits) > 8:
        return None
    return int(digits) * unit


def messages(body: bytes, encoding: str | None) -> list[bytes]:
    """The messages in a request's body, decompressed; WireError if it is cut
    short, compressed in a way not accepted, or a message is over the limit."""
    out, at = [], 0
    while at < len(body):
        if len(body) - at < PREFIX.size:
            raise WireError(INTERNAL, "a message prefix is cut short")
        flag, size = PREFIX.unpack_from(body, at)
        at += PREFIX.size
        if size > MAX_RECEIVE:
            raise WireError(RESOURCE_EXHAUSTED, f"Received message larger than max "
                                                f"({size} vs. {MAX_RECEIVE})")
        if len(body) - at < size:
            raise WireError(INTERNAL, "a message is cut short")
        data = body[at:at + size]
        at += size
        if flag:
            data = decompressed(data, encoding)
        out.append(data)
    return out


def decompressed(data: bytes, encoding: str | None) -> bytes:
    """A compressed message, inflated no further than the limit (a small
    body must not become gigabytes)."""
    wbits = WBITS.get(encoding or "")
    if wbits is None:
        raise WireError(UNIMPLEMENTED, f"Compression algorithm '{encoding}' is not supported")
    try:
        made = zlib.decompressobj(wbits).decompress(data, MAX_RECEIVE + 1)
    except zlib.error as exc:
        raise WireError(INTERNAL, f"a message did not decompress: {exc}") from None
    if len(made) > MAX_RECEIVE:
        raise WireError(RESOURCE_EXHAUSTED, f"Received message larger than max "
                                            f"(over {MAX_RECEIVE} inflated)")
    return made


def framed(data: bytes) -> bytes:
    return PREFIX.pack(0, len(data)) + data


def metadata_of(headers: Iterable[Header]) -> tuple[tuple[str, str | bytes], ...]:
    """The call's metadata as grpc.aio hands it to a servicer: keys lower case,
    `-bin` values decoded."""
    out: list[tuple[str, str | bytes]] = []
    for raw_key, raw_value in headers:
        key = raw_key.decode("latin-1")
        if key in NOT_METADATA or key.startswith(":"):
            continue
        if key.endswith("-bin"):
            out.append((key, base64.b64decode(raw_value + b"=" * (-len(raw_value) % 4))))
        else:
            out.append((key, raw_value.decode("latin-1")))
    return tuple(out)


def as_headers(metadata: Sequence[tuple[str, str | bytes]] | None) -> list[Header]:
    """Metadata to send: `-bin` values in base64 without padding."""
    out = []
    for key, value in metadata or ():
        if key.endswith("-bin"):
            raw = value if isinstance(value, bytes) else value.encode()
            out.append((key.encode(), base64.b64encode(raw).rstrip(b"=")))
        else:
            text = value if isinstance(value, str) else value.decode("latin-1")
            out.append((key.encode(), text.encode("latin-1")))
    return out


def status_trailers(code: int, message: str,
                    trailing: Sequence[tuple[str, str | bytes]] | None) -> list[Header]:
    trailers = [(b"grpc-status", str(code).encode())]
    if message:
        trailers.append((b"grpc-message", percent_encoded(message)))
    return trailers + as_headers(trailing)


def percent_encoded(message: str) -> bytes:
    """grpc-message: UTF-8, each byte outside printable ASCII (and `%`) as %XX."""
    return b"".join(bytes((b,)) if 0x20 <= b <= 0x7E and b != 0x25 else b"%%%02X" % b
                    for b in message.encode())
