"""How the in-memory store keeps a task: small, since `make bench` measures it
against the official SDK's in-memory store.

- A task still taking events is a `Live` row; its log is one bytearray of
  framed events. A derived event (`append(..., derived=True)`: the runtime's
  status and artifact updates) is logged alone; the task is rebuilt with the
  reducer from the events logged since when it is read. Serializing the
  whole task on every chunk of a streamed artifact cost as much as the rest
  of the event's way through the store. Once the task is final (it takes no
  more events) the row is packed into a single bytes object: header, context
  id, task, log (`View` reads either kind).
- In a packed row the task id and context id, repeated in the task and in
  every event, are stored once (`_pack_ids`): each occurrence in the
  serialized bytes becomes a two-byte token. Packing happens once per task,
  off the per-event path.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

from a2a_grpc.core import lifecycle, states
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task
from a2a_grpc.stores.base import StoredTask

_ESC, _ESC_ESC, _TASK_ID, _CONTEXT_ID = b"\xff", b"\xff\x00", b"\xff\x01", b"\xff\x02"
_UNSAFE = re.compile(b"[\x00\x01\x02\xff]").search
FRAME = struct.Struct("<qI")  # an event in a log: seq, length; then the event
_HEAD = struct.Struct("<qqBII")  # a packed row: ns, seq, state, context id length, task length
TERMINAL = frozenset(int(s) for s in states.TERMINAL)


def _substitutable(value: bytes) -> bool:
    """Can `value` become a token? Not when empty, and not when it holds the
    escape byte or a token's second byte (a match could then swallow part of
    a token). UTF-8 never holds 0xff; the other three are control characters."""
    return bool(value) and _UNSAFE(value) is None


def _token_id(value: str) -> bytes:
    """`value` encoded, or b"" when it cannot become a token. A printable str
    can: its UTF-8 holds no control character and never 0xff; the regular
    expression, dearer (docs/benchmarks.md), decides the rest."""
    encoded = value.encode()
    return encoded if value.isprintable() or _substitutable(encoded) else b""


def _pack_ids(data: bytes, task_id: bytes, context_id: bytes) -> bytes:
    """`data` with each occurrence of the ids replaced by a two-byte token.

    Escaping 0xff first makes every 0xff of the result the start of exactly
    one token, so `_unpack_ids` restores `data` byte for byte."""
    return _pack_tokens(data, task_id if _substitutable(task_id) else b"",
                        context_id if _substitutable(context_id) else b"")


def _pack_tokens(data: bytes, task_id: bytes, context_id: bytes) -> bytes:
    """`_pack_ids` with ids known to be substitutable (b"": left as they are).
    An id is replaced by splitting and joining: the same bytes as `replace`,
    which for a long needle counts the matches in a pass of its own first."""
    if _ESC in data:
        data = data.replace(_ESC, _ESC_ESC)
    if task_id:
        data = _TASK_ID.join(data.split(task_id))
    if context_id:
        data = _CONTEXT_ID.join(data.split(context_id))
    return data


def _unpack_ids(data: bytes, task_id: bytes, context_id: bytes) -> bytes:
    if _ESC not in data:
        return data
    return (data.replace(_TASK_ID, task_id).replace(_CONTEXT_ID, context_id)
            .replace(_ESC_ESC, _ESC))


@dataclass(slots=True)
class Live:
    """A task that may still take events; stored as it came."""

    blob: bytes  # the task, as of the first `folded` bytes of the log
    seq: int
    status_ns: int  # status timestamp, for sorting
    context_id: str
    state: int
    log: bytearray = field(default_factory=bytearray)  # frames: FRAME then the event
    folded: int = 0  # the events after these bytes are derived ones, not yet in `blob`

    def current(self) -> bytes:
        """The task: `blob` with the derived events logged since folded in."""
        if self.folded < len(self.log):
            task = Task.FromString(self.blob)
            for _, body in _frames(self.log, self.folded):
                lifecycle.apply(task, StreamResponse.FromString(body))
            self.blob, self.folded = task.SerializeToString(), len(self.log)
        return self.blob

    def packed(self, task_id: str) -> bytes:
        """The row as one bytes object, ids packed (in the task, and in the log as a
        whole: its frame lengths are those of the unpacked events)."""
        cid = self.context_id.encode()
        tid_token, cid_token = _token_id(task_id), _token_id(self.context_id)
        blob = _pack_tokens(self.current(), tid_token, cid_token)
        return b"".join((_HEAD.pack(self.status_ns, self.seq, self.state, len(cid), len(blob)),
                         cid, blob, _pack_tokens(bytes(self.log), tid_token, cid_token)))


def _frames(log: bytes | bytearray, at: int = 0) -> Iterator[tuple[int, bytes]]:
    """(seq, event bytes) of each frame of a log, from byte `at` on."""
    while at < len(log):
        seq, size = FRAME.unpack_from(log, at)
        at += FRAME.size
        yield seq, bytes(log[at:at + size])
        at += size


class View:
    """Read access to either kind of row; a packed row is sliced only as needed."""

    __slots__ = ("_live", "_packed", "_start", "context_id", "seq", "state", "status_ns")
    _live: Live | None

    def __init__(self, row: Live | bytes) -> None:
        if isinstance(row, Live):
            self.status_ns, self.seq, self.state = row.status_ns, row.seq, row.state
            self.context_id, self._live, self._packed = row.context_id, row, b""
            return
        self.status_ns, self.seq, self.state, cid_len, blob_len = _HEAD.unpack_from(row)
        self._start = (_HEAD.size + cid_len, _HEAD.size + cid_len + blob_len)
        self.context_id = row[_HEAD.size:self._start[0]].decode()
        self._live, self._packed = None, row

    def blob(self, task_id: str) -> bytes:
        if self._live is not None:
            return self._live.current()
        return self._unpack(self._start[0], self._start[1], task_id)

    def log(self, task_id: str) -> bytes | bytearray:
        if self._live is not None:
            return self._live.log
        return self._unpack(self._start[1], len(self._packed), task_id)

    def _unpack(self, start: int, end: int, task_id: str) -> bytes:
        """Bytes start:end of the packed row, ids restored."""
        data = self._packed[start:end]
        if _ESC not in data:
            return data
        return _unpack_ids(data, task_id.encode(), self._packed[_HEAD.size:self._start[0]])

    def task(self, task_id: str) -> Task:
        return Task.FromString(self.blob(task_id))

    def events(self, task_id: str) -> Iterator[tuple[int, bytes]]:
        return _frames(self.log(task_id))


def packed_task(row: bytes, task_id: str) -> StoredTask:
    """GetTask's path: the task of a packed row, nothing else unpacked."""
    _, seq, _, cid_len, blob_len = _HEAD.unpack_from(row)
    start = _HEAD.size + cid_len
    data = row[start:start + blob_len]
    if _ESC in data:
        data = _unpack_ids(data, task_id.encode(), row[_HEAD.size:start])
    return StoredTask(Task.FromString(data), seq)


def head(row: Live | bytes) -> tuple[int, int, int]:
    """(ns, seq, state) of a row, without unpacking the rest."""
    if isinstance(row, Live):
        return row.status_ns, row.seq, row.state
    return _HEAD.unpack_from(row)[:3]
