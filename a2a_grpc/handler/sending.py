"""SendMessage, a part the handler holds: the checks of every send (the
streaming one's too, `start`), and the blocking or returnImmediately answer,
wherever the task runs (this process, or another replica: `elsewhere`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from a2a_grpc.core import lifecycle
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import TaskNotFoundError
from a2a_grpc.execution.run import Run
from a2a_grpc.generated.a2a_pb2 import SendMessageRequest, SendMessageResponse
from a2a_grpc.handler.access import Access
from a2a_grpc.handler.activation import Activations
from a2a_grpc.handler.generations import Generations
from a2a_grpc.handler.idempotency import Duplicate, Forwarded
from a2a_grpc.handler.intake import Intake
from a2a_grpc.stores import MessageTakenError, Scope, TaskFencedError, TaskStore

# A task no run of this process holds, answered as a send of it is once it
# settles (or at once): Housekeeping.settled_elsewhere.
Elsewhere = Callable[[Scope, str, bool], Awaitable[SendMessageResponse]]


class SendCalls:
    def __init__(self, access: Access, generations: Generations, intake: Intake,
                 store: TaskStore, elsewhere: Elsewhere) -> None:
        self._access, self._generations, self._intake = access, generations, intake
        self._store, self._elsewhere = store, elsewhere
        self.activations = Activations(store)

    def start(
        self, req: SendMessageRequest, ctx: CallContext,
        before: Callable[[str], Awaitable[None]] | None = None, scope: Scope | None = None,
    ) -> Coroutine[Any, Any, Run | Duplicate | Forwarded]:
        """The checks of a send, then the intake's coroutine (handed back, not
        awaited in one more of our own: every send goes through here)."""
        self._access.preflight(ctx)
        self._generations.incoming(req, ctx)
        if req.configuration.HasField("task_push_notification_config"):
            self._access.require_push(ctx)
        if scope is None:
            scope = self._access.scope(req.tenant, ctx)
        return self._intake.start(req, ctx, scope, before)

    async def send_message(self, req: SendMessageRequest, ctx: CallContext) -> SendMessageResponse:
        scope = self._access.scope(req.tenant, ctx)
        started = await self.start(req, ctx, None, scope)
        elsewhere = self._elsewhere
        config = req.configuration  # read once: a protobuf read costs about a call
        at_once = config.return_immediately
        outcome: SendMessageResponse | BaseException
        if isinstance(started, Forwarded):
            outcome = await elsewhere(scope, started.task_id, at_once)
        elif isinstance(started, Duplicate) and started.run is None:
            # A retry of a send whose run this process does not hold (done, or on
            # another replica): answered as that send is, once the task settles.
            assert started.task_id is not None
            outcome = await elsewhere(scope, started.task_id, at_once)
        else:
            run = started.run if isinstance(started, Duplicate) else started
            assert run is not None
            if at_once:
                outcome = await _await_start(run)
            else:  # the final or interrupted state (or the run's hand-off)
                outcome = await run.settled
        if isinstance(outcome, MessageTakenError):  # another replica's task: answer with it
            taken = await self._store.task_for_message(scope, req.message.message_id)
            if taken is not None:
                outcome = await elsewhere(scope, taken, at_once)
        elif isinstance(outcome, TaskFencedError):  # another replica took the task over
            try:
                outcome = await elsewhere(scope, outcome.task_id, at_once)
            except TaskNotFoundError:
                pass  # never stored (its first write failed: a full disk): the refusal says so
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome.HasField("task"):  # else a direct reply: nothing to trim or hide
            task = outcome.task
            if ctx.extensions:  # only a call that asks for extensions is told of any
                await self._activated(started, scope, task.context_id, req, ctx)
            self._generations.task(lifecycle.trim_history(
                task, lifecycle.history_length_of(config)), ctx)
        return outcome

    async def _activated(self, started: Run | Duplicate | Forwarded, scope: Scope,
                         context_id: str, req: SendMessageRequest, ctx: CallContext) -> None:
        """A retry is told what the first send activated; a first send keeps it."""
        if isinstance(started, Duplicate | Forwarded):
            await self.activations.recall(scope, context_id, req.message.message_id, ctx,
                                          started.run if isinstance(started, Duplicate)
                                          else None)
        elif ctx.activated:
            await self.activations.keep(scope, context_id, req.message.message_id, ctx)


async def _await_start(run: Run) -> SendMessageResponse | BaseException:
    """What a send with returnImmediately waits for: the run's first event."""
    error = await run.started
    if error is not None:
        return error
    if run.settled.done():
        return run.settled.result()
    try:
        return await run.actor.committed_response()
    except Exception as exc:
        return exc
