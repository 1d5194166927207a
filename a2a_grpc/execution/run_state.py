"""A run as the task's actor, its journal and its sink see it.

`run.Run` is one `execute()` of the agent on a task; the actor it runs on
(`actor.TaskActor`) keeps its runs and reads and sets a few of their fields.
This Protocol is that view, so the actor's module need not import the run's
(which imports the actor's: a run calls its actor).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from a2a_grpc.agent import RequestContext
from a2a_grpc.generated.a2a_pb2 import Message, SendMessageResponse, Task

Outcome = SendMessageResponse | BaseException
OnCreate = Callable[[Task], Coroutine[Any, Any, None]]


class RunState(Protocol):
    context: RequestContext | None  # None: resuming a task after a restart
    pending: Message | None  # the user's message, until it is recorded
    lost: BaseException | None  # events of this run the store refused
    replied: bool
    emitted: bool
    cancelled: bool
    first_seq: int
    on_create: OnCreate | None
    aio_task: asyncio.Task[None] | None

    def mark_started(self, error: BaseException | None = None) -> None: ...

    def settle(self, outcome: Outcome) -> None: ...

    def interrupt(self) -> None: ...

    async def hand_off(self) -> None: ...
