"""The hub of `serve --workers N` on one machine without Redis: the
supervisor relays events, requests and rate counts between its workers over
a Unix socket (frames: hub_wire.py; the workers' side: hub_client.py).

- **Events go only where they are watched.** The hub knows which workers
  subscribe to which task. A worker publishes a task's events to the hub only
  while another worker subscribes to it (its interest, `I`/`N`): a unary call,
  or a stream read on the worker that runs the task, costs no frame at all.
- **No event falls between a subscription and the store.** A worker's `S`
  is answered (`A`) only once every other worker has heard that the task is
  now watched (`K`): an event committed after that is published to the hub,
  one committed before is in the store the subscriber reads next.
- **Asks** (cancel, a follow-up for a task another worker runs) go to every
  other worker; the first "done" answers, all "no" mean nobody runs it.
- **Rates** (`--rate-limit`): each caller's token bucket lives here, so N
  requests a second are N across the workers.
- **A worker gone** (its connection closed: it exited, was killed, or was cut
  off): the others are told its lease holder, and take its running tasks
  over at once instead of when their leases end. Safe whatever the reason:
  a claim moves the task's epoch on, so a worker still writing is fenced.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from a2a_grpc.bus.answers import NOT_DONE
from a2a_grpc.bus.hub_wire import frame, read_frame

log = logging.getLogger("a2a_grpc.workers")

BEHIND_BYTES = 64 << 20  # events queued for one worker that does not read them


@dataclass(eq=False)
class _Worker:
    writer: asyncio.StreamWriter
    watching: set[bytes] = field(default_factory=set)  # tasks it subscribes to
    told: set[bytes] = field(default_factory=set)  # tasks it was told others watch
    holder: bytes = b""  # its lease holder, once it says


@dataclass(eq=False)
class _Waiting:
    """A request answered once `left` other workers have answered."""

    asker: _Worker
    token: bytes
    left: set[_Worker]
    answer: bytes = NOT_DONE  # the first other answer (done, refused) wins


class Hub:
    def __init__(self) -> None:
        self._workers: set[_Worker] = set()
        self._watchers: dict[bytes, set[_Worker]] = {}
        self._asks: dict[bytes, _Waiting] = {}
        self._subscribing: dict[bytes, _Waiting] = {}
        self._ids = itertools.count()
        self._buckets: dict[bytes, tuple[float, float]] = {}  # key: (tokens, at)
        self._server: asyncio.AbstractServer | None = None

    async def start(self, path: Path) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for worker in list(self._workers):
            worker.writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        worker = _Worker(writer)
        self._workers.add(worker)
        # A worker (re)starting may take over a task watched elsewhere: it hears
        # what is watched before it does anything (H ends the list).
        for task in self._watchers:
            worker.told.add(task)
            writer.write(frame(b"I", b"", task))
        writer.write(frame(b"H"))
        try:
            while True:
                kind, fields = await read_frame(reader)
                self._handle(worker, kind, fields)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._gone(worker)
            writer.close()

    def _handle(self, worker: _Worker, kind: bytes, fields: list[bytes]) -> None:
        if kind in (b"P", b"X"):
            message = frame(b"E" if kind == b"P" else b"X", *fields)
            for other in list(self._watchers.get(fields[0], ())):
                if other is not worker:
                    self._relay(other, message)
        elif kind == b"S":
            self._subscribe(worker, fields[0], fields[1])
        elif kind == b"U":
            self._unsubscribe(worker, fields[0])
        elif kind == b"K":
            self._heard(self._subscribing, fields[0], worker, b"")
        elif kind == b"Q":
            self._ask(worker, fields)
        elif kind == b"R":
            self._heard(self._asks, fields[0], worker, fields[1])
        elif kind == b"O":
            worker.holder = fields[0]
        elif kind == b"T":
            wait = self._take(fields[1], float(fields[2]), float(fields[3]))
            worker.writer.write(frame(b"W", fields[0], repr(wait).encode()))
        else:
            log.warning("a worker sent a frame of unknown kind %r", kind)

    def _relay(self, worker: _Worker, message: bytes) -> None:
        """An event to a worker, unless it stopped reading (hung): past
        BEHIND_BYTES unread, its connection is closed, so it stops and is
        started again, and its streams' clients resume elsewhere. The hub
        never holds more than that for one worker."""
        if worker.writer.transport.get_write_buffer_size() > BEHIND_BYTES:
            if not worker.writer.is_closing():
                log.error("a worker has not read %d bytes of events from the hub: closing "
                          "its connection (it stops, and is started again)", BEHIND_BYTES)
                worker.writer.close()
            return
        worker.writer.write(message)

    def _subscribe(self, worker: _Worker, token: bytes, task: bytes) -> None:
        watchers = self._watchers.setdefault(task, set())
        watchers.add(worker)
        worker.watching.add(task)
        hub_token = str(next(self._ids)).encode()
        waiting = _Waiting(worker, token, set())
        for other in self._workers:
            if other is not worker and task not in other.told:
                other.told.add(task)
                other.writer.write(frame(b"I", hub_token, task))
                waiting.left.add(other)
        self._subscribing[hub_token] = waiting
        self._settle(self._subscribing, hub_token)

    def _unsubscribe(self, worker: _Worker, task: bytes) -> None:
        worker.watching.discard(task)
        watchers = self._watchers.get(task)
        if watchers is None:
            return
        watchers.discard(worker)
        if not watchers:
            del self._watchers[task]
        for other in self._workers:
            if task in other.told and not (watchers or set()) - {other}:
                other.told.discard(task)
                other.writer.write(frame(b"N", task))

    def _ask(self, worker: _Worker, fields: list[bytes]) -> None:
        hub_token = str(next(self._ids)).encode()
        waiting = _Waiting(worker, fields[0], self._workers - {worker})
        message = frame(b"Q", hub_token, *fields[1:])
        for other in waiting.left:
            other.writer.write(message)
        self._asks[hub_token] = waiting
        self._settle(self._asks, hub_token)

    def _heard(self, pending: dict[bytes, _Waiting], token: bytes, worker: _Worker,
               answer: bytes) -> None:
        waiting = pending.get(token)
        if waiting is None:
            return
        waiting.left.discard(worker)
        if waiting.answer == NOT_DONE:
            waiting.answer = answer or NOT_DONE
        self._settle(pending, token)

    def _settle(self, pending: dict[bytes, _Waiting], token: bytes) -> None:
        """Answer the asker once every worker asked has answered (an ask: or
        once one did it)."""
        waiting = pending[token]
        if waiting.left and waiting.answer == NOT_DONE:
            return
        del pending[token]
        if waiting.asker in self._workers:
            reply = (frame(b"A", waiting.token) if pending is self._subscribing
                     else frame(b"R", waiting.token, waiting.answer))
            waiting.asker.writer.write(reply)

    def _take(self, key: bytes, rate: float, burst: float) -> float:
        """The caller's token bucket: 0 when a token was taken, else the
        seconds until one is there."""
        now = time.monotonic()
        tokens, at = self._buckets.get(key, (burst, now))
        tokens = min(burst, tokens + (now - at) * rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / rate
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > 100_000:  # forget the callers idle the longest
            for old in sorted(self._buckets, key=lambda k: self._buckets[k][1])[:50_000]:
                del self._buckets[old]
        return wait

    def _gone(self, worker: _Worker) -> None:
        """A worker's connection closed (it stopped, or was killed): it watches
        nothing more, and the requests waiting on its answer stop waiting."""
        self._workers.discard(worker)
        if worker.holder:  # its running tasks: the others take them over now
            for other in self._workers:
                other.writer.write(frame(b"D", worker.holder))
        for task in list(worker.watching):
            self._unsubscribe(worker, task)
        for pending in (self._subscribing, self._asks):
            for token, waiting in list(pending.items()):
                if worker in waiting.left:
                    waiting.left.discard(worker)
                    self._settle(pending, token)
                elif waiting.asker is worker:
                    del pending[token]
