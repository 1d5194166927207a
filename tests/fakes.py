"""Test agents: real AgentExecutors whose behaviour each test scripts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.generated.a2a_pb2 import Task
from a2a_grpc.stores import Appended, MemoryTaskStore, Scope

Script = Callable[[RequestContext, TaskEvents], Awaitable[None]]


class ScriptedAgent(AgentExecutor):
    """Runs `script` for every message and records what it was given."""

    def __init__(self, script: Script, on_cancel: Script | None = None) -> None:
        self.script = script
        self.contexts: list[RequestContext] = []
        self.cancelled: list[str] = []
        self._on_cancel = on_cancel

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        self.contexts.append(context)
        await self.script(context, events)

    async def cancel(self, task: Task, events: TaskEvents) -> None:
        self.cancelled.append(task.id)
        if self._on_cancel is not None:
            await self._on_cancel(self.contexts[-1], events)


class Gate:
    """Lets a test release an agent step by step: `await gate.wait()` in the
    agent, `gate.open()` in the test."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reached = asyncio.Event()

    async def wait(self) -> None:
        self.reached.set()
        await self._event.wait()

    def open(self) -> None:
        self._event.set()


class FullDiskStore(MemoryTaskStore):
    """The real in-memory store, with a switch that makes writes fail (a full disk).

    `refuse_next` refuses writes as they are made; `fail_later_next` accepts
    them and fails their commit a moment later, as a durable store does."""

    writes_fail = False
    refuse_next = 0  # refuse this many writes, then work again
    fail_later_next = 0  # fail the commit of this many writes, then work again

    def __init__(self) -> None:
        super().__init__()
        self._failed_at: dict[str, int] = {}

    def append_many(self, scope: Scope, task: Task, events: Sequence[Appended],
                    notify: bool = False, epoch: int = 0) -> Awaitable[None]:
        if self.refuse_next > 0:
            self.refuse_next -= 1
            raise OSError("No space left on device")
        if self.writes_fail:
            raise OSError("No space left on device")
        first = events[0].seq
        failed_at = self._failed_at.get(task.id)
        if failed_at is not None and first <= failed_at:
            del self._failed_at[task.id]  # the writer starts again from the failed event
        elif failed_at is not None or self.fail_later_next > 0:  # (a store keeps no holes)
            if failed_at is None:
                self.fail_later_next -= 1
                self._failed_at[task.id] = first
            failed = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_soon(
                failed.set_exception, OSError("No space left on device"))
            return failed
        return MemoryTaskStore.append_many(self, scope, task, events, notify, epoch)
