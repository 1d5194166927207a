"""How RedisEventBus adds events to their tasks' streams: in pipelines.

`publish` queues the event and returns; one flusher sends what has queued
as one pipeline (one round trip for a whole burst, in publication order),
then the next: a round trip per event held streams to a fraction of the
in-process bus (docs/benchmarks.md, `make bench --only bus`). Each stream's expiry is set
once a pipeline. What did not reach Redis ends the local streams of its task
(`lost`), and the subscribers on other replicas see the gap it leaves.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, NamedTuple

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

log = logging.getLogger("a2a_grpc.bus")

MAX_EVENTS = 10_000  # entries a task's stream keeps (approximately: XADD MAXLEN ~)
LINGER_S = 300  # a final task's stream stays this long for late readers
IDLE_S = 24 * 3600  # any other task's stream, after its last event
MAX_QUEUED = 10_000  # past this, publishers wait for the flusher (Redis is slow)
PIPELINE = 1_000  # entries a pipeline carries at most


class _Entry(NamedTuple):
    task_id: str
    seq: int
    body: bytes | None  # the event; None: an error entry (`text`)
    final: bool
    text: str = ""


def _seq_of(entry_id: bytes) -> int:
    return int(entry_id.partition(b"-")[0])


class Publisher:
    def __init__(self, client: aioredis.Redis, key: Callable[[str], str],
                 lost: Callable[[str, str], None]) -> None:
        self._redis, self._key, self._lost = client, key, lost
        self._queue: list[_Entry] = []
        self._flusher: asyncio.Task[None] | None = None
        self._last: dict[str, int] = {}  # task -> the last sequence number queued here

    async def event(self, task_id: str, seq: int, body: bytes, final: bool) -> None:
        if len(self._last) >= 100_000 and task_id not in self._last:
            del self._last[next(iter(self._last))]
        self._last[task_id] = seq
        await self._put(_Entry(task_id, seq, body, final))

    def last(self, task_id: str) -> int | None:
        """The task's last event published from here, if remembered."""
        return self._last.get(task_id)

    async def error(self, task_id: str, text: str) -> None:
        """An error entry after the task's last event (`{seq}-N`, N >= 1)."""
        seq = self._last.get(task_id)
        if seq is None:  # not published from here: after whatever the stream has
            top: Any = await self._redis.xrevrange(self._key(task_id), count=1)
            seq = _seq_of(top[0][0]) if top else 0
        await self._put(_Entry(task_id, seq, None, True, text))

    async def drain(self) -> None:
        """Until everything queued so far was sent (or failed)."""
        while self._flusher is not None:
            await asyncio.shield(self._flusher)

    async def _put(self, entry: _Entry) -> None:
        self._queue.append(entry)
        if self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(self._flush(),
                                                                    name="a2a-bus-publish")
        if len(self._queue) >= MAX_QUEUED:
            await self.drain()

    async def _flush(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue[:PIPELINE], self._queue[PIPELINE:]
                await self._send(batch)
        finally:
            self._flusher = None

    async def _send(self, batch: list[_Entry]) -> None:
        expiry: dict[str, int] = {}
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for e in batch:
                    key = self._key(e.task_id)
                    if e.body is not None:
                        pipe.xadd(key, {"e": e.body}, id=f"{e.seq}-0", maxlen=MAX_EVENTS,
                                  approximate=True)
                    else:
                        pipe.xadd(key, {"x": e.text}, id=f"{e.seq}-*")
                    expiry[key] = LINGER_S if e.final or expiry.get(key) == LINGER_S else IDLE_S
                for key, seconds in expiry.items():
                    pipe.expire(key, seconds)
                results: list[Any] = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as exc:
            results = [exc] * len(batch)
        for e, added in zip(batch, results, strict=False):
            if isinstance(added, ResponseError) and "equal or smaller" in str(added):
                continue  # published before (the ID is the sequence number)
            if isinstance(added, BaseException):
                log.warning("event %d of task %s did not reach the event bus: %s", e.seq,
                            e.task_id, added)
                self._lost(e.task_id, f"event {e.seq} did not reach the event bus"
                           if e.body is not None else e.text)
