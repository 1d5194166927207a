"""The event bus of a worker of `serve --workers N` (`--bus hub://PATH`, set
by the supervisor): the in-process bus for the streams read here, the hub
(hub.py) for the streams other workers read and for asking them.

- A task's events reach this worker's subscribers at once, through the
  in-process bus this one is built on, and go to the hub only while another worker subscribes to
  the task (the hub says so: `I`/`N`).
- Subscribing to a task no other subscription here watches yet waits for the
  hub's answer: from then on every event of the task, wherever it is
  written, comes here (hub.py says why nothing falls in between).
- Without its supervisor a worker stops: when the hub's connection ends,
  the streams end with a retryable error and the process sends itself
  SIGTERM (the usual drain).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import signal
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

from a2a_grpc.bus.answers import DONE, NOT_DONE, answered, refusal
from a2a_grpc.bus.base import Control, Published, Subscription
from a2a_grpc.bus.hub_wire import frame, read_frame
from a2a_grpc.bus.local import Backlog, LocalEventBus
from a2a_grpc.core.errors import A2AError, UnavailableError
from a2a_grpc.generated.a2a_pb2 import StreamResponse

log = logging.getLogger("a2a_grpc.workers")

ASK_TIMEOUT_S = 10.0  # as the Redis bus: a worker's cancel may wait for its agent's cancel()
SUBSCRIBE_TIMEOUT_S = 5.0  # every other worker answers at once, unless it hangs
GONE = "the supervisor (serve --workers) went away"


def _stop_process() -> None:
    signal.raise_signal(signal.SIGTERM)


class HubEventBus:
    def __init__(self, path: str, backlog: Backlog | None = None,
                 lost: Callable[[], None] = _stop_process) -> None:
        self.path, self._lost = path, lost
        self._local = LocalEventBus(backlog)  # this worker's subscribers
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._interest: set[str] = set()  # tasks another worker subscribes to
        self._remote: dict[str, tuple[int, asyncio.Future[bytes]]] = {}  # task: (subs, hub's A)
        self._waiting: dict[bytes, asyncio.Future[bytes]] = {}
        self._ids = itertools.count()
        self._on: Control | None = None
        self._gone: Callable[[str], Coroutine[Any, Any, None]] | None = None
        self._handling: set[asyncio.Task[None]] = set()
        self._closing = False

    async def open(self) -> None:
        try:
            reader, self._writer = await asyncio.open_unix_connection(self.path)
        except OSError as exc:
            raise OSError(f"cannot reach the workers' hub at {self.path}: {exc}") from exc
        hello = asyncio.get_running_loop().create_future()
        self._waiting[b"H"] = hello
        self._reader_task = asyncio.get_running_loop().create_task(
            self._read(reader), name="a2a-hub")
        await asyncio.wait_for(hello, SUBSCRIBE_TIMEOUT_S)

    def _send(self, *message: bytes) -> None:
        if self._writer is None or self._writer.is_closing():
            raise UnavailableError(f"{GONE}; try again shortly")
        self._writer.write(frame(*message))

    async def _request(self, within: float, *message: bytes) -> bytes:
        token = str(next(self._ids)).encode()
        answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[token] = answer
        try:
            self._send(message[0], token, *message[1:])
            return await asyncio.wait_for(answer, within)
        finally:
            self._waiting.pop(token, None)

    # -- this worker's streams, and the others' --

    @property
    def published(self) -> int:
        return self._local.published

    def backlog(self) -> int:
        return self._local.backlog()

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        await self._local.publish(task_id, seq, event)
        if task_id in self._interest:
            self._send(b"P", task_id.encode(), str(seq).encode(), event.SerializeToString())
            assert self._writer is not None
            await self._writer.drain()  # at once unless the hub falls behind

    async def publish_many(self, task_id: str, events: Sequence[Published]) -> None:
        for one in events:
            await self.publish(task_id, one.seq, one.event)

    async def publish_error(self, task_id: str, error: BaseException) -> None:
        await self._local.publish_error(task_id, error)
        if task_id in self._interest:
            self._send(b"X", task_id.encode(), (str(error) or type(error).__name__).encode())

    @asynccontextmanager
    async def subscribe(self, task_id: str) -> AsyncIterator[Subscription]:
        async with self._local.subscribe(task_id) as sub:
            held = self._remote.get(task_id)
            if held is None:  # the first here: the hub is told, once for all of them
                held = (0, asyncio.get_running_loop().create_task(self._request(
                    SUBSCRIBE_TIMEOUT_S, b"S", task_id.encode())))
            self._remote[task_id] = (held[0] + 1, held[1])
            try:
                try:
                    await asyncio.shield(held[1])
                except TimeoutError:
                    raise UnavailableError(
                        "another worker does not answer; try again shortly",
                        metadata={"taskId": task_id}) from None
                yield sub
            finally:
                count, subscribed = self._remote[task_id]
                if count > 1:
                    self._remote[task_id] = (count - 1, subscribed)
                else:
                    del self._remote[task_id]
                    with suppress(UnavailableError):
                        self._send(b"U", task_id.encode())

    def subscriber_count(self, task_id: str) -> int:
        return self._local.subscriber_count(task_id)

    def interrupt(self, why: str) -> int:
        return self._local.interrupt(why)

    # -- the other workers --

    async def ask(self, kind: str, scope: tuple[str, str], task_id: str,
                  body: bytes = b"") -> bool:
        try:
            answer = await self._request(ASK_TIMEOUT_S, b"Q", kind.encode(), scope[0].encode(),
                                         scope[1].encode(), task_id.encode(), body)
        except TimeoutError:
            log.warning("asked the other workers to %s task %s: no answer in %g s", kind,
                        task_id, ASK_TIMEOUT_S)
            return False
        return answered(answer)

    def answer(self, on: Control) -> None:
        self._on = on

    def holds_as(self, holder: str, gone: Callable[[str], Coroutine[Any, Any, None]]) -> None:
        """Tell the hub this worker's lease holder; `gone(holder)` is called
        with another worker's when that worker goes away."""
        self._gone = gone
        self._send(b"O", holder.encode())

    async def take(self, key: str, rate: float, burst: float) -> float | None:
        """Seconds to wait (0: a token was taken) for `key`'s rate across the
        workers, or None when the hub is away (the caller counts alone)."""
        try:
            return float(await self._request(1.0, b"T", key.encode(), repr(rate).encode(),
                                             repr(burst).encode()))
        except (TimeoutError, UnavailableError):
            return None

    def _handle(self, work: Coroutine[Any, Any, None]) -> None:
        handling = asyncio.get_running_loop().create_task(work)
        self._handling.add(handling)
        handling.add_done_callback(self._handling.discard)

    async def _answer(self, token: bytes, fields: list[bytes]) -> None:
        kind, tenant, owner, task = (f.decode() for f in fields[:4])
        answer = NOT_DONE
        if self._on is not None:
            try:
                answer = DONE if await self._on(kind, (tenant, owner), task, fields[4]) \
                    else NOT_DONE
            except A2AError as exc:  # the agent refused (a cancel it cannot do): the
                # asker's caller gets the refusal, as it would have here
                log.info("another worker asked to %s task %s: %s", kind, task, exc)
                answer = refusal(exc)
            except Exception:
                log.exception("doing what another worker asked failed")
        with suppress(UnavailableError):
            self._send(b"R", token, answer)

    # -- the hub's connection --

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                kind, fields = await read_frame(reader)
                if kind == b"E":
                    self._local.deliver(fields[0].decode(), int(fields[1]),
                                        StreamResponse.FromString(fields[2]))
                elif kind == b"X":
                    self._local.deliver_error(fields[0].decode(),
                                              UnavailableError(fields[1].decode()))
                elif kind == b"I":
                    self._interest.add(fields[1].decode())
                    if fields[0]:
                        self._send(b"K", fields[0])
                elif kind == b"N":
                    self._interest.discard(fields[0].decode())
                elif kind == b"Q":
                    self._handle(self._answer(fields[0], fields[1:]))
                elif kind == b"D":
                    if self._gone is not None:
                        self._handle(self._gone(fields[0].decode()))
                else:  # A, R, W: answers; H: the hub's hello
                    answer = self._waiting.get(fields[0] if fields else kind)
                    if answer is not None and not answer.done():
                        answer.set_result(fields[1] if len(fields) > 1 else b"")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        if self._writer is not None:
            self._writer.close()
        if not self._closing:
            log.error("%s: this worker stops", GONE)
            self._local.interrupt(f"{GONE}: resume the stream")
            for answer in self._waiting.values():
                if not answer.done():
                    answer.set_exception(UnavailableError(f"{GONE}; try again shortly"))
            self._lost()

    async def ping(self) -> bool:
        return self._writer is not None and not self._writer.is_closing()

    async def close(self) -> None:
        self._closing = True
        if self._writer is not None:
            self._writer.close()
        if self._reader_task is not None:
            self._reader_task.cancel()
            with suppress(asyncio.CancelledError):
                await self._reader_task
