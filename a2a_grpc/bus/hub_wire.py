"""Frames between `serve --workers`' supervisor (the hub, hub.py) and its
workers (hub_client.py), over a Unix socket.

A frame is its length (4 bytes, big-endian, of what follows), its kind (one
byte) and its fields, each a 4-byte length and that many bytes. The hub reads
the kind and the task id; an event's bytes go through it as they came.

Kinds, worker to hub:
  S token task       subscribe this worker to a task's events (answered A token)
  U task             unsubscribe
  P task seq event   an event, for the other workers subscribed
  X task why         the task's writer broke: its streams end
  Q id kind tenant owner task body
                     ask the other workers (answered R id 1|0)
  T id key rate burst
                     take a token of a caller's rate (answered W id seconds)
  K token            the interest I token was heard
  O holder           this worker's lease holder (app/leases.py)
Hub to worker: A, E (= P), X, Q, R, W, and
  I token task       another worker subscribes: publish the task's events (answer K)
  N task             no other worker subscribes any more
  H                  (once, as a worker connects) the tasks watched so far were told
  D holder           that holder's worker is gone: its leases may be taken at once
"""

from __future__ import annotations

import asyncio
import struct

_HEAD = struct.Struct(">IB")
_LEN = struct.Struct(">I")


def frame(kind: bytes, *fields: bytes) -> bytes:
    body = b"".join(_LEN.pack(len(f)) + f for f in fields)
    return _HEAD.pack(len(body), kind[0]) + body


async def read_frame(reader: asyncio.StreamReader) -> tuple[bytes, list[bytes]]:
    """The next frame's kind and fields; IncompleteReadError at the end."""
    size, kind = _HEAD.unpack(await reader.readexactly(_HEAD.size))
    body = await reader.readexactly(size) if size else b""
    fields, at = [], 0
    while at < size:
        (n,) = _LEN.unpack_from(body, at)
        at += _LEN.size
        fields.append(body[at:at + n])
        at += n
    return bytes((kind,)), fields
