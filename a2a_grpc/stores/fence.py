"""The fence on appends, one rule for every store (see base.py, "Fencing").

An append of event `seq` by a writer that read the task at `epoch` extends
the log only where that writer left it: the task exists (or `seq` is 1 and
it does not yet), nobody took it over since (the stored epoch is the
writer's), its log does not end in a final event, and its last event is
`seq - 1`.
"""

from __future__ import annotations

from typing import NamedTuple, cast

from a2a_grpc.core import states
from a2a_grpc.generated.a2a_pb2 import TaskState
from a2a_grpc.stores.errors import TaskFencedError
from a2a_grpc.stores.writes import TERMINAL


class Fence(NamedTuple):
    """What the store holds of a task, as the fence reads it."""

    last: int  # the sequence number of its last logged event
    state: int
    epoch: int


def refusal(task_id: str, seq: int, epoch: int, found: Fence | None) -> TaskFencedError | None:
    """Why an append of event `seq` must be refused, or None when it may go in."""
    if found is None:
        if seq == 1:
            return None
        return TaskFencedError(task_id, "it is not stored (deleted meanwhile, or its first "
                               "write failed)")
    if found.epoch != epoch:
        return TaskFencedError(task_id, "another replica took it over after this one's "
                               "lease on it ended", taken=True)
    if found.state in TERMINAL:
        final = states.name(cast(TaskState, found.state))
        return TaskFencedError(task_id, f"it is {final}: a final task takes no more events")
    if seq == 1:
        return TaskFencedError(task_id, "a task with this id exists already")
    if found.last != seq - 1:
        return TaskFencedError(task_id, f"its log ends at event {found.last}, not {seq - 1}: "
                               "another server wrote it meanwhile")
    return None


def fenced(task_id: str, seq: int, head: tuple[int, int, int] | None) -> None:
    """The in-process stores' check: `head` is (status ns, last seq, state) of the
    stored task, None when there is none. Raises TaskFencedError."""
    if head is not None and seq > 1 and head[1] == seq - 1 and head[2] not in TERMINAL:
        return  # what `refusal` lets in, checked first: it is every event but a task's first
    found = None if head is None else Fence(head[1], head[2], 0)
    error = refusal(task_id, seq, 0, found)
    if error is not None:
        raise error
