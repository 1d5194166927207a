"""Idempotent sends (spec §3.3.1): a retried message starts no second piece of work.

A send is known by (scope, messageId). While its run is in flight the run
itself is found here; once its message is recorded, the store knows which
task it went to (`task_for_message`). A retry gets that run's outcome or the
task as it stands. Reusing a messageId for another task is InvalidParams.
Direct replies create no task, so once answered they are not remembered.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from a2a_grpc.core.errors import FieldViolation, InvalidParamsError
from a2a_grpc.execution.run import Run
from a2a_grpc.generated.a2a_pb2 import Message
from a2a_grpc.stores import Scope, TaskStore


@dataclass(frozen=True, slots=True)
class Forwarded:
    """A follow-up for a task another replica runs: handed to it (bus.ask)."""

    task_id: str


@dataclass(slots=True)
class Duplicate:
    """A send whose messageId was seen before: its run if still going, and task."""

    run: Run | None
    task_id: str | None


class SentMessages:
    def __init__(self, store: TaskStore) -> None:
        self._store = store
        self._inflight: dict[tuple[Scope, str], Run] = {}

    async def seen(self, scope: Scope, msg: Message) -> Duplicate | None:
        """The earlier send of `msg.message_id`, if any (an await: see `racing`)."""
        message_id, named = msg.message_id, msg.task_id  # a protobuf read costs about a call
        run = self._inflight.get((scope, message_id))
        task_id = run.actor.task_id if run is not None else await self._store.task_for_message(
            scope, message_id, not named)  # claimed by a send that starts a task
        if run is None and task_id is None:
            run = self._inflight.get((scope, message_id))  # arrived during the await
            if run is None:
                return None
            task_id = run.actor.task_id
        if named and task_id and named != task_id and (run is None or not run.replied):
            raise InvalidParamsError(
                f"messageId {msg.message_id!r} was already used for task {task_id}; "
                "give every new message a new messageId",
                violations=[FieldViolation("message.messageId", "already used")])
        return Duplicate(run, task_id)

    def racing(self, scope: Scope, message_id: str, task_id: str | None) -> Duplicate | None:
        """Checked with no await before the run is tracked: the same message
        sent twice at once, the other arriving while this one was checked."""
        run = self._inflight.get((scope, message_id))
        return None if run is None else Duplicate(run, task_id)

    def track(self, scope: Scope, message_id: str, run: Run) -> None:
        """Known until the run is answered; the store knows it from then on."""
        if run.settled.done():
            return  # answered already (a follow-up queued behind a run that ended)
        key = (scope, message_id)
        self._inflight[key] = run
        run.on_settled = partial(self._drop, key, run)

    def _drop(self, key: tuple[Scope, str], run: Run) -> None:
        if self._inflight.get(key) is run:
            del self._inflight[key]
