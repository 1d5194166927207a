"""Task states and the transitions between them (spec §3.1, §4.1.3).

Rules, all in this file:
- COMPLETED, FAILED, CANCELED and REJECTED are final: nothing leaves them.
- INPUT_REQUIRED and AUTH_REQUIRED are interrupted: the task waits for the
  client, whose next message on the same task resumes it.
- A task starts SUBMITTED and never returns there (a status that says
  SUBMITTED again while it still is, an SDK executor's `submit()` after its
  Task, is no return); UNSPECIFIED is never a state a task can be moved to.
- Any other move between non-final states is allowed: an agent may report
  WORKING again (a progress note), ask for input again, or finish.
"""

from __future__ import annotations

from a2a_grpc.generated.a2a_pb2 import TaskState

SUBMITTED = TaskState.TASK_STATE_SUBMITTED
WORKING = TaskState.TASK_STATE_WORKING
COMPLETED = TaskState.TASK_STATE_COMPLETED
FAILED = TaskState.TASK_STATE_FAILED
CANCELED = TaskState.TASK_STATE_CANCELED
REJECTED = TaskState.TASK_STATE_REJECTED
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED
AUTH_REQUIRED = TaskState.TASK_STATE_AUTH_REQUIRED
UNSPECIFIED = TaskState.TASK_STATE_UNSPECIFIED

TERMINAL: frozenset[TaskState] = frozenset({COMPLETED, FAILED, CANCELED, REJECTED})
INTERRUPTED: frozenset[TaskState] = frozenset({INPUT_REQUIRED, AUTH_REQUIRED})
# A stream (and a blocking send) ends once the task reaches one of these.
SETTLED: frozenset[TaskState] = TERMINAL | INTERRUPTED


def name(state: TaskState) -> str:
    """`TASK_STATE_WORKING` -> `working`, for messages meant for people."""
    return TaskState.Name(state).removeprefix("TASK_STATE_").lower()


def can_move(current: TaskState, target: TaskState) -> bool:
    """Whether a task in `current` may be moved to `target`."""
    if current in TERMINAL or target == UNSPECIFIED:
        return False
    if target == SUBMITTED:
        return current == SUBMITTED
    return bool(current != UNSPECIFIED)
