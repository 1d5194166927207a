"""In-memory task store: for tests and throwaway demos (`--store memory`).

Tasks and events are kept as serialized bytes, so nothing a caller holds can
alias what is stored. Listing sorts the scope's tasks on each call: fine for
thousands of tasks; the SQL stores serve large volumes from an index.

Memory per task is kept small (`make bench` measures it against the official
SDK's in-memory store):
- A task still taking events is a `_Live` row; its log is one bytearray of
  framed events. A derived event (`append(..., derived=True)`: the runtime's
  status and artifact updates) is logged alone; the task is rebuilt with the
  reducer from the events logged since when it is read. Serializing the
  whole task on every chunk of a streamed artifact cost as much as the rest
  of the event's way through the store. Once the task is final (it takes no more events) the row
  is packed into a single bytes object: header, context id, task, log.
- In a packed row the task id and context id, repeated in the task and in
  every event, are stored once (`_pack_ids`): each occurrence in the
  serialized bytes becomes a two-byte token. Packing happens once per task,
  off the per-event path.
- The messageId index shares the task id strings of the task table.
"""

from __future__ import annotations

import re
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from generated.a2a_pb2 import StreamResponse, Task, TaskPushNotificationConfig

from ..core import lifecycle, listing, states
from ..core.ids import nanos_of
from ..core.listing import SortKey, TaskQuery
from .base import Delivery, Scope, StoredTask

_ESC, _ESC_ESC, _TASK_ID, _CONTEXT_ID = b"\xff", b"\xff\x00", b"\xff\x01", b"\xff\x02"
_UNSAFE = re.compile(b"[\x00\x01\x02\xff]").search
_FRAME = struct.Struct("<qI")  # an event in a log: seq, length; then the event
_HEAD = struct.Struct("<qqBII")  # a packed row: ns, seq, state, context id length, task length
_TERMINAL = frozenset(int(s) for s in states.TERMINAL)


def _substitutable(value: bytes) -> bool:
    """Can `value` become a token? Not when empty, and not when it holds the
    escape byte or a token's second byte (a match could then swallow part of
    a token). UTF-8 never holds 0xff; the other three are control characters."""
    return bool(value) and _UNSAFE(value) is None


def _pack_ids(data: bytes, task_id: bytes, context_id: bytes) -> bytes:
    """`data` with each occurrence of the ids replaced by a two-byte token.

    Escaping 0xff first makes every 0xff of the result the start of exactly
    one token, so `_unpack_ids` restores `data` byte for byte."""
    if _ESC in data:
        data = data.replace(_ESC, _ESC_ESC)
    if _substitutable(task_id):
        data = data.replace(task_id, _TASK_ID)
    if _substitutable(context_id):
        data = data.replace(context_id, _CONTEXT_ID)
    return data


def _unpack_ids(data: bytes, task_id: bytes, context_id: bytes) -> bytes:
    if _ESC not in data:
        return data
    return (data.replace(_TASK_ID, task_id).replace(_CONTEXT_ID, context_id)
            .replace(_ESC_ESC, _ESC))


@dataclass(slots=True)
class _Live:
    """A task that may still take events; stored as it came."""

    blob: bytes  # the task, as of the first `folded` bytes of the log
    seq: int
    ns: int  # status timestamp, for sorting
    context_id: str
    state: int
    log: bytearray = field(default_factory=bytearray)  # frames: _FRAME then the event
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
        tid, cid = task_id.encode(), self.context_id.encode()
        blob = _pack_ids(self.current(), tid, cid)
        return b"".join((_HEAD.pack(self.ns, self.seq, self.state, len(cid), len(blob)),
                         cid, blob, _pack_ids(bytes(self.log), tid, cid)))


def _frames(log: bytes | bytearray, at: int = 0) -> Iterator[tuple[int, bytes]]:
    """(seq, event bytes) of each frame of a log, from byte `at` on."""
    while at < len(log):
        seq, size = _FRAME.unpack_from(log, at)
        at += _FRAME.size
        yield seq, bytes(log[at:at + size])
        at += size


class _View:
    """Read access to either kind of row; a packed row is sliced only as needed."""

    __slots__ = ("_live", "_packed", "_start", "context_id", "ns", "seq", "state")
    _live: _Live | None

    def __init__(self, row: _Live | bytes) -> None:
        if isinstance(row, _Live):
            self.ns, self.seq, self.state = row.ns, row.seq, row.state
            self.context_id, self._live, self._packed = row.context_id, row, b""
            return
        self.ns, self.seq, self.state, cid_len, blob_len = _HEAD.unpack_from(row)
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


def _packed_task(row: bytes, task_id: str) -> StoredTask:
    """GetTask's path: the task of a packed row, nothing else unpacked."""
    _, seq, _, cid_len, blob_len = _HEAD.unpack_from(row)
    start = _HEAD.size + cid_len
    data = row[start:start + blob_len]
    if _ESC in data:
        data = _unpack_ids(data, task_id.encode(), row[_HEAD.size:start])
    return StoredTask(Task.FromString(data), seq)


def _head(row: _Live | bytes) -> tuple[int, int, int]:
    """(ns, seq, state) of a row, without unpacking the rest."""
    if isinstance(row, _Live):
        return row.ns, row.seq, row.state
    return _HEAD.unpack_from(row)[:3]


@dataclass(slots=True)
class MemoryTaskStore:
    _tasks: dict[Scope, dict[str, _Live | bytes]] = field(default_factory=dict)
    # per (scope, task): config id -> (the config, its payload)
    _push: dict[tuple[Scope, str], dict[str, tuple[bytes, str]]] = field(default_factory=dict)
    _messages: dict[Scope, dict[str, str]] = field(default_factory=dict)
    _outbox: dict[int, _Entry] = field(default_factory=dict)
    _handed_off: set[tuple[Scope, str]] = field(default_factory=set)
    _next_id: int = 1

    async def open(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def append(
        self, scope: Scope, task: Task, seq: int, event: StreamResponse,
        message_id: str | None = None, notify: bool = False, derived: bool = False,
    ) -> None:
        tasks = self._tasks.get(scope)
        if tasks is None:
            tasks = self._tasks[scope] = {}
        task_id, status = task.id, task.status
        old = tasks.get(task_id)
        body = event.SerializeToString()
        frame = _FRAME.pack(seq, len(body))
        if derived and isinstance(old, _Live) and (state := status.state) not in _TERMINAL:
            # A streamed task grows with every chunk: log the event alone, and
            # fold it into the task when the task is read (or turns final).
            old.log += frame
            old.log += body
            old.seq = seq
            if not event.HasField("artifact_update"):  # an artifact changes neither
                old.ns, old.state = nanos_of(status.timestamp), state
        else:
            if isinstance(old, bytes):  # a final task taking an event: unpack it
                view = _View(old)
                old = _Live(view.blob(task_id), view.seq, view.ns, view.context_id, view.state,
                            bytearray(view.log(task_id)))
            row = _Live(task.SerializeToString(), seq, nanos_of(status.timestamp),
                        task.context_id, status.state,
                        old.log if old is not None else bytearray())
            row.log += frame
            row.log += body
            row.folded = len(row.log)
            # An existing key keeps its string object; a new task's id string is
            # shared by the message index below.
            tasks[task_id] = row.packed(task_id) if row.state in _TERMINAL else row
        if message_id:
            self._messages.setdefault(scope, {})[message_id] = task_id
        if notify:
            for config_id in self._push.get((scope, task_id), {}):
                self._outbox[self._next_id] = _Entry(
                    Delivery(self._next_id, scope, task_id, config_id, seq, 0, ""),
                    time.time_ns())
                self._next_id += 1

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        row = self._tasks.get(scope, {}).get(task_id)
        if row is None:
            return None
        if isinstance(row, _Live):
            return StoredTask(Task.FromString(row.current()), row.seq)
        return _packed_task(row, task_id)

    async def events(
        self, scope: Scope, task_id: str, after: int, upto: int
    ) -> list[tuple[int, StreamResponse]]:
        row = self._tasks.get(scope, {}).get(task_id)
        if row is None:
            return []
        return [(s, StreamResponse.FromString(b)) for s, b in _View(row).events(task_id)
                if after < s <= upto]

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        rows = self._tasks.get(Scope(query.tenant, query.owner), {})
        hits: list[tuple[SortKey, _View]] = []
        for task_id, row in rows.items():
            ns, _, state = _head(row)
            if ((query.status and state != query.status)
                    or (query.after_ns is not None and ns < query.after_ns)):
                continue
            view = _View(row)
            if query.context_id and view.context_id != query.context_id:
                continue
            hits.append(((ns, task_id), view))
        hits.sort(key=lambda hit: hit[0], reverse=True)
        page = [(key, view) for key, view in hits if listing.after_cursor(query, key)]
        return [view.task(key[1]) for key, view in page[: query.page_size]], len(hits)

    async def task_id_taken(self, tenant: str, task_id: str) -> bool:
        return any(task_id in rows for scope, rows in self._tasks.items()
                   if scope.tenant == tenant)

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        return self._messages.get(scope, {}).get(message_id)

    async def set_handed_off(self, scope: Scope, task_id: str, handed_off: bool) -> None:
        if handed_off and task_id in self._tasks.get(scope, {}):
            self._handed_off.add((scope, task_id))
        else:
            self._handed_off.discard((scope, task_id))

    async def unsettled(self) -> list[tuple[Scope, StoredTask]]:
        found: list[tuple[Scope, StoredTask]] = []
        for scope, rows in self._tasks.items():
            for task_id, row in rows.items():
                if (_head(row)[2] in (states.SUBMITTED, states.WORKING)
                        and (scope, task_id) not in self._handed_off):
                    view = _View(row)
                    found.append((scope, StoredTask(view.task(task_id), view.seq)))
        return found

    async def purge(self, before_ns: int) -> int:
        gone = 0
        for scope, rows in self._tasks.items():
            for task_id in [i for i, r in rows.items()
                            if _head(r)[2] in _TERMINAL and _head(r)[0] < before_ns]:
                del rows[task_id]
                self._push.pop((scope, task_id), None)
                self._handed_off.discard((scope, task_id))
                gone += 1
        self._outbox = {k: e for k, e in self._outbox.items()
                        if e.delivery.task_id in self._tasks.get(e.delivery.scope, {})}
        for scope, index in self._messages.items():
            rows = self._tasks.get(scope, {})
            self._messages[scope] = {m: t for m, t in index.items() if t in rows}
        return gone

    async def save_push_config(self, scope: Scope, config: TaskPushNotificationConfig,
                               payload: str = "") -> None:
        self._push.setdefault((scope, config.task_id), {})[config.id] = (
            config.SerializeToString(), payload)

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        target = await self.get_push_target(scope, task_id, config_id)
        return None if target is None else target[0]

    async def get_push_target(
        self, scope: Scope, task_id: str, config_id: str
    ) -> tuple[TaskPushNotificationConfig, str] | None:
        saved = self._push.get((scope, task_id), {}).get(config_id)
        return None if saved is None else (TaskPushNotificationConfig.FromString(saved[0]),
                                           saved[1])

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> list[TaskPushNotificationConfig]:
        configs = self._push.get((scope, task_id), {}).values()
        return [TaskPushNotificationConfig.FromString(blob) for blob, _ in configs]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        self._push.get((scope, task_id), {}).pop(config_id, None)
        for key, e in list(self._outbox.items()):
            d = e.delivery
            if not e.dead and (d.scope, d.task_id, d.config_id) == (scope, task_id, config_id):
                del self._outbox[key]

    async def due_deliveries(self, now_ns: int, limit: int) -> list[Delivery]:
        heads: dict[tuple[Scope, str, str], _Entry] = {}
        for e in self._outbox.values():
            d = e.delivery
            key = (d.scope, d.task_id, d.config_id)
            if not e.dead and (key not in heads or d.seq < heads[key].delivery.seq):
                heads[key] = e
        due = sorted((e.next_ns, e.delivery.id) for e in heads.values() if e.next_ns <= now_ns)
        return [self._outbox[i].delivery for _, i in due[:limit]]

    async def next_due(self) -> int | None:
        return min((e.next_ns for e in self._outbox.values() if not e.dead), default=None)

    async def delivered(self, delivery_id: int) -> None:
        self._outbox.pop(delivery_id, None)

    async def reschedule(self, delivery_id: int, attempts: int, next_ns: int, error: str) -> None:
        e = self._outbox.get(delivery_id)
        if e is not None:
            e.delivery = e.delivery._replace(attempts=attempts, last_error=error)
            e.next_ns = next_ns

    async def dead_letter(self, delivery_id: int, attempts: int, error: str) -> None:
        e = self._outbox.get(delivery_id)
        if e is not None:
            e.delivery = e.delivery._replace(attempts=attempts, last_error=error)
            e.dead = True

    async def dead_letters(self, limit: int = 100) -> list[Delivery]:
        return [e.delivery for e in sorted(self._outbox.values(), key=lambda e: e.delivery.id)
                if e.dead][:limit]


@dataclass(slots=True)
class _Entry:
    delivery: Delivery
    next_ns: int
    dead: bool = False
