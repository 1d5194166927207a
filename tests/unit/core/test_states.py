"""The transition table, checked pair by pair against spec §3.1 / §4.1.3."""

from __future__ import annotations

import itertools

import pytest

from a2a_grpc.core import states
from a2a_grpc.generated.a2a_pb2 import TaskState

ALL = [v for v in TaskState.values()]
LIVE = [states.SUBMITTED, states.WORKING, states.INPUT_REQUIRED, states.AUTH_REQUIRED]


@pytest.mark.parametrize(("current", "target"), list(itertools.product(ALL, ALL)))
def test_can_move(current: int, target: int) -> None:
    expected = (
        current in LIVE  # final and UNSPECIFIED tasks never move
        and target != states.UNSPECIFIED
        # nothing returns to the start; a task not yet worked on may say so again
        and (target != states.SUBMITTED or current == states.SUBMITTED)
    )
    assert states.can_move(current, target) is expected  # type: ignore[arg-type,unused-ignore]


def test_terminal_and_interrupted_sets_match_the_proto() -> None:
    assert {TaskState.Name(s) for s in states.TERMINAL} == {
        "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"
    }
    assert {TaskState.Name(s) for s in states.INTERRUPTED} == {
        "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"
    }
    assert states.name(states.INPUT_REQUIRED) == "input_required"
