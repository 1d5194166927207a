"""Test agents: real AgentExecutors whose behaviour each test scripts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.stores import MemoryTaskStore, Scope
from generated.a2a_pb2 import StreamResponse, Task

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
    """The real in-memory store, with a switch that makes writes fail (a full disk)."""

    writes_fail = False
    refuse_next = 0  # refuse this many writes, then work again

    async def append(self, scope: Scope, task: Task, seq: int, event: StreamResponse,
                     message_id: str | None = None, notify: bool = False,
                     derived: bool = False) -> None:
        if self.refuse_next > 0:
            self.refuse_next -= 1
            raise OSError("No space left on device")
        if self.writes_fail:
            raise OSError("No space left on device")
        await MemoryTaskStore.append(self, scope, task, seq, event, message_id, notify, derived)
