"""Event bus on Redis Streams (`--bus redis://HOST:PORT/DB?prefix=P`): a task's
events reach its subscribers on every replica, not only in the process that
runs it.

- A task's events are the stream `{prefix}:ev:{task id}`. `publish` (called
  once the store committed the event) adds it under the ID `{seq}-0`, so the
  stream is ordered by sequence number and an event is never added twice;
  a burst goes in one pipeline (redis_publish.py).
  The stream keeps at most about `MAX_EVENTS` entries and expires `LINGER_S`
  after its task's final event (`IDLE_S` after any other event): the store's
  log is the record, the stream only carries what is live.
- A subscription starts at the stream's tail as it subscribes and reads from
  there in a task of its own (a blocking XREAD on a connection of its own,
  closed when it ends: redis-py does not give up a blocking read when its
  task is cancelled, it waits it out), into the same bounded queue as the
  in-process bus (`LocalSubscription`). So it
  gets every event published after it subscribed, whatever the replica; the
  caller reads the store after subscribing and skips what it already has
  (streams.open_tail), so nothing falls between the two.
- Replicas ask each other to act on a task one of them runs (`ask`: cancel
  it) over Pub/Sub (redis_control.py).
- `publish_error` adds `{seq}-N` (N >= 1) entries: the writer broke, and the
  streams of every replica end with a retryable error.
- When Redis fails (a publish that did not reach it, a read cut off for
  good, or a gap in the sequence numbers a subscription sees), the
  subscriptions concerned end with UnavailableError naming the last event
  they had: the client resumes with SubscribeToTask and Last-Event-ID,
  which replays from the store. Unary calls never touch the bus.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError

from a2a_grpc.bus.base import Control, Event, Published
from a2a_grpc.bus.local import Backlog, LocalSubscription, Subscribers
from a2a_grpc.bus.redis_control import ControlChannel
from a2a_grpc.bus.redis_publish import Publisher
from a2a_grpc.core import states
from a2a_grpc.core.errors import UnavailableError
from a2a_grpc.generated.a2a_pb2 import StreamResponse

log = logging.getLogger("a2a_grpc.bus")

BLOCK_MS = 5_000  # one XREAD waits at most this long, then asks again
UNREACHABLE = "the event bus (Redis) is unreachable; try again shortly"
# A command cut off is tried again on a new connection, three times within about
# half a second (a read resumes after the last entry it had: nothing is lost);
# past that, the streams concerned end with a retryable error.
RETRIES = 3
RETRY = Retry(ExponentialBackoff(cap=0.25, base=0.05), retries=RETRIES)


def _seq_of(entry_id: bytes) -> tuple[int, int]:
    ms, _, n = entry_id.partition(b"-")
    return int(ms), int(n or 0)


def _final(event: StreamResponse) -> bool:
    kind = event.WhichOneof("payload")
    if kind == "status_update":
        return event.status_update.status.state in states.TERMINAL
    return kind == "task" and event.task.status.state in states.TERMINAL


class RedisSubscription(LocalSubscription):
    """A LocalSubscription fed by a reader task from one Redis stream."""

    __slots__ = ("_conn", "_end_after", "_published", "_queued", "_reader", "_seen")

    def __init__(self, task_id: str, backlog: Backlog,
                 published: Callable[[], int | None] = lambda: None) -> None:
        super().__init__(task_id, backlog)
        self._published = published  # the task's last event published from this process
        self._end_after: int | None = None
        self._reader: asyncio.Task[None] | None = None
        self._conn: Connection | None = None  # its reader's, while open
        self._seen: int | None = None  # the last sequence number read, when known
        self._queued: int | None = None  # the last one queued for the reader

    def feed(self, entry_id: bytes, fields: dict[bytes, bytes]) -> bool:
        """Queue one stream entry; False once the subscription has ended."""
        seq, n = _seq_of(entry_id)
        if n:
            self.fail(fields.get(b"x", b"the task's writer failed").decode())
            return False
        if self._seen is not None and seq != self._seen + 1:
            self.fail(f"events {self._seen + 1}-{seq - 1} did not reach the event bus")
            return False
        self._seen = self._queued = seq
        self.put(Event(seq, StreamResponse.FromString(fields[b"e"])))
        if self._end_after is not None and seq >= self._end_after:
            self._end_after = None
            super().end()
        return True

    def end(self) -> None:
        """END after the events this process published so far: they may still be
        on their way through Redis."""
        last = self._published()
        if last is None or (self._queued is not None and self._queued >= last):
            super().end()
        else:
            self._end_after = last

    async def close(self) -> None:
        """Stop the reader: its connection is closed under its blocking read."""
        reader, conn = self._reader, self._conn
        self._reader = self._conn = None
        if conn is not None:
            await conn.disconnect(nowait=True)
        if reader is not None:
            reader.cancel()
            with suppress(asyncio.CancelledError):
                await reader

    def fail(self, why: str) -> None:
        """End the stream, after what is queued, with a retryable error naming
        where to resume."""
        self.stop(self.resumable(f"{why}: resume it with SubscribeToTask "
                                 f"(task {self._task_id})", self._queued))


class RedisEventBus:
    def __init__(self, url: str, backlog: Backlog | None = None) -> None:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        self.prefix = query.pop("prefix", "a2a")
        self.url = urlunsplit(parts._replace(query=urlencode(query)))
        self.limits = backlog or Backlog()
        self.published = 0
        self._redis = aioredis.Redis.from_url(self.url, retry=RETRY)
        self._subs: Subscribers[RedisSubscription] = Subscribers()
        self._publisher = Publisher(self._redis, self.key, self._fail_local)
        self._control = ControlChannel(self._redis, self.prefix)

    def key(self, task_id: str) -> str:
        return f"{self.prefix}:ev:{task_id}"

    async def open(self) -> None:
        try:
            await self._redis.ping()
        except (RedisError, OSError) as exc:
            raise OSError(f"cannot reach the event bus at {self.url}: {exc}") from exc

    async def ask(self, kind: str, scope: tuple[str, str], task_id: str,
                  body: bytes = b"") -> bool:
        return await self._control.ask(kind, scope, task_id, body)

    def answer(self, on: Control) -> None:
        self._control.answer(on)

    async def close(self) -> None:
        await self._publisher.drain()
        await self._control.close()
        for sub in self._subs.every():
            await sub.close()
        await self._redis.aclose()

    async def ping(self) -> bool:
        try:
            return bool(await self._redis.ping())
        except (RedisError, OSError):
            return False

    def backlog(self) -> int:
        return self._subs.queued()

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        self.published += 1
        await self._publisher.event(task_id, seq, event.SerializeToString(), _final(event))

    async def publish_many(self, task_id: str, events: Sequence[Published]) -> None:
        for one in events:
            await self.publish(task_id, one.seq, one.event)

    async def publish_error(self, task_id: str, error: BaseException) -> None:
        try:
            await self._publisher.error(task_id, str(error) or type(error).__name__)
        except (RedisError, OSError):
            self._fail_local(task_id, str(error))

    async def flush(self) -> None:
        """Until everything published so far reached Redis (or failed)."""
        await self._publisher.drain()

    @asynccontextmanager
    async def subscribe(self, task_id: str) -> AsyncIterator[RedisSubscription]:
        key = self.key(task_id)
        sub = RedisSubscription(task_id, self.limits, lambda: self._publisher.last(task_id))
        try:
            top: Any = await self._redis.xrevrange(key, count=1)
        except (RedisError, OSError) as exc:
            raise UnavailableError(UNREACHABLE, metadata={"taskId": task_id}) from exc
        start = top[0][0] if top else b"0-0"
        if top:
            sub._seen = _seq_of(start)[0]
        sub._reader = asyncio.get_running_loop().create_task(
            self._follow(key, sub, start), name=f"a2a-bus-{task_id}")
        with self._subs.held(task_id, sub):
            try:
                yield sub
            finally:
                await sub.close()

    def subscriber_count(self, task_id: str) -> int:
        return len(self._subs.of(task_id))

    def interrupt(self, why: str) -> int:
        return self._subs.interrupt(why)

    async def _follow(self, key: str, sub: RedisSubscription, after: bytes) -> None:
        """Read `key` after `after` into `sub` until it closes, on a connection of
        its own; a read cut off is tried again (RETRY's count), from where it was."""
        failures = 0
        while sub._reader is not None:
            try:
                if sub._conn is None:
                    sub._conn = self._redis.connection_pool.make_connection()  # type: ignore[no-untyped-call]
                    await sub._conn.connect()
                await sub._conn.send_command("XREAD", "COUNT", 500, "BLOCK", BLOCK_MS,
                                             "STREAMS", key, after)
                # Longer than the block: redis-py's default socket timeout is 5 s.
                got: Any = await sub._conn.read_response(timeout=BLOCK_MS / 1000 + 10)
            except Exception as exc:
                if sub._reader is None:
                    return  # closed under the read (whatever redis-py made of that)
                if not isinstance(exc, (RedisError, OSError)):
                    raise
                conn, sub._conn = sub._conn, None
                if conn is not None:
                    await conn.disconnect(nowait=True)
                failures += 1
                if failures <= RETRIES:
                    await asyncio.sleep(0.05 * 2 ** failures)
                    continue
                log.warning("reading %s from the event bus failed: %s", key, exc)
                sub.fail("the event bus (Redis) was cut off")
                return
            failures = 0
            # A raw reply: [[key, entries]] in RESP2, {key: entries} in RESP3.
            for _, entries in (got.items() if isinstance(got, dict) else got or ()):
                for entry_id, fields in entries:
                    after = entry_id
                    if not isinstance(fields, dict):
                        fields = dict(zip(fields[::2], fields[1::2], strict=True))
                    if not sub.feed(entry_id, fields):
                        return

    def _fail_local(self, task_id: str, why: str) -> None:
        for sub in list(self._subs.of(task_id)):
            sub.fail(why)
