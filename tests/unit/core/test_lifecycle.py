"""The reducer and the follow-up rules, without any I/O."""

from __future__ import annotations

import pytest

from a2a_grpc.core import lifecycle, states
from a2a_grpc.core.errors import (
    InvalidAgentResponseError,
    InvalidParamsError,
    UnsupportedOperationError,
)
from a2a_grpc.generated.a2a_pb2 import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
)


def task(state: int = states.WORKING, history: int = 0) -> Task:
    return Task(
        id="t1", context_id="c1", status=TaskStatus(state=state),  # type: ignore[arg-type]
        history=[Message(message_id=f"m{i}", role=Role.ROLE_USER, parts=[Part(text=str(i))])
                 for i in range(history)],
    )


def status(state: int, text: str | None = None, task_id: str = "t1") -> StreamResponse:
    st = TaskStatus(state=state)  # type: ignore[arg-type]
    if text is not None:
        st.message.CopyFrom(Message(message_id="a", role=Role.ROLE_AGENT, parts=[Part(text=text)]))
    return StreamResponse(status_update=TaskStatusUpdateEvent(
        task_id=task_id, context_id="c1", status=st))


def artifact(art_id: str, text: str, append: bool = False) -> StreamResponse:
    return StreamResponse(artifact_update=TaskArtifactUpdateEvent(
        task_id="t1", context_id="c1",
        artifact=Artifact(artifact_id=art_id, parts=[Part(text=text)]), append=append))


@pytest.mark.parametrize("current", [states.SUBMITTED, states.WORKING, states.INPUT_REQUIRED,
                                     states.AUTH_REQUIRED])
@pytest.mark.parametrize("target", [states.WORKING, states.COMPLETED, states.FAILED,
                                    states.CANCELED, states.REJECTED, states.INPUT_REQUIRED,
                                    states.AUTH_REQUIRED])
def test_live_tasks_accept_status_moves(current: int, target: int) -> None:
    t = task(current)
    lifecycle.apply(t, status(target))
    assert t.status.state == target


@pytest.mark.parametrize("current", sorted(states.TERMINAL))
@pytest.mark.parametrize("event", [status(states.WORKING), status(states.COMPLETED),
                                   artifact("a", "x")])
def test_final_tasks_refuse_every_event_and_stay_unchanged(
    current: int, event: StreamResponse
) -> None:
    t = task(current)
    before = t.SerializeToString()
    with pytest.raises(lifecycle.IllegalTransitionError):
        lifecycle.apply(t, event)
    assert t.SerializeToString() == before


@pytest.mark.parametrize("target", [states.SUBMITTED, states.UNSPECIFIED])
def test_no_task_goes_back_to_submitted_or_unspecified(target: int) -> None:
    with pytest.raises(lifecycle.IllegalTransitionError):
        lifecycle.apply(task(states.WORKING), status(target))


def test_status_message_goes_to_history() -> None:
    t = task(states.WORKING, history=1)
    lifecycle.apply(t, status(states.INPUT_REQUIRED, "which city?"))
    assert [m.parts[0].text for m in t.history] == ["0", "which city?"]


def test_event_for_another_task_is_refused() -> None:
    with pytest.raises(InvalidAgentResponseError, match="does not belong"):
        lifecycle.apply(task(), status(states.COMPLETED, task_id="other"))


@pytest.mark.parametrize(("kind", "why"), [("task", "cannot update a task"),
                                           ("message", "only answer to a new message"),
                                           (None, "cannot update a task")])
def test_only_updates_change_a_task(kind: str | None, why: str) -> None:
    ev = StreamResponse()
    if kind == "task":
        ev.task.CopyFrom(task())
    elif kind == "message":
        ev.message.message_id = "x"
    t = task()
    with pytest.raises(InvalidAgentResponseError, match=why):
        lifecycle.apply(t, ev)
    assert t == task()


def test_a_task_event_comes_first_and_creates_the_task() -> None:
    first = StreamResponse(task=Task(id="t1", context_id="c1", history=[Message(message_id="m")]))
    made = lifecycle.apply(None, first).task
    assert made is not None and made.status.state == states.SUBMITTED
    assert (made.id, made.context_id, len(made.history)) == ("t1", "c1", 1)
    working = StreamResponse(task=Task(id="t1", context_id="c1",
                                       status=TaskStatus(state=states.WORKING)))
    assert lifecycle.apply(None, working).task.status.state == states.WORKING  # type: ignore[union-attr]


def test_a_direct_reply_creates_no_task() -> None:
    assert lifecycle.apply(None, StreamResponse(message=Message(message_id="r"))).task is None


@pytest.mark.parametrize("first", [
    status(states.WORKING), artifact("a", "x"), StreamResponse(),
    StreamResponse(task=Task(id="t1")),  # no context
    StreamResponse(task=Task(id="t1", context_id="c1",
                             status=TaskStatus(state=states.COMPLETED))),
])
def test_nothing_else_comes_first(first: StreamResponse) -> None:
    with pytest.raises(InvalidAgentResponseError):
        lifecycle.apply(None, first)


def test_artifact_chunks_append_and_replace() -> None:
    t = task()
    lifecycle.apply(t, artifact("a", "one"))
    lifecycle.apply(t, artifact("a", "two", append=True))
    lifecycle.apply(t, artifact("b", "other"))
    assert [[p.text for p in a.parts] for a in t.artifacts] == [["one", "two"], ["other"]]
    lifecycle.apply(t, artifact("a", "fresh"))  # same id, no append: replaced
    assert [p.text for p in t.artifacts[0].parts] == ["fresh"]


def test_a_chunk_of_several_parts_appends_them_all_in_order() -> None:
    t = task()
    lifecycle.apply(t, artifact("a", "one"))
    chunk = artifact("a", "two", append=True)
    chunk.artifact_update.artifact.parts.add(text="three")
    undo = lifecycle.apply(t, chunk).undo
    assert [p.text for p in t.artifacts[0].parts] == ["one", "two", "three"]
    undo()
    assert [p.text for p in t.artifacts[0].parts] == ["one"]


def test_append_to_unknown_artifact_is_refused() -> None:
    t = task()
    with pytest.raises(InvalidAgentResponseError, match="unknown artifact"):
        lifecycle.apply(t, artifact("nope", "x", append=True))
    assert not t.artifacts


@pytest.mark.parametrize(("state", "error"), [
    (states.COMPLETED, UnsupportedOperationError), (states.FAILED, UnsupportedOperationError),
    (states.CANCELED, UnsupportedOperationError), (states.REJECTED, UnsupportedOperationError),
    (states.INPUT_REQUIRED, None), (states.AUTH_REQUIRED, None), (states.WORKING, None),
])
def test_follow_up_rules(state: int, error: type[Exception] | None) -> None:
    msg = Message(message_id="m", task_id="t1", role=Role.ROLE_USER, parts=[Part(text="x")])
    if error is None:
        lifecycle.check_follow_up(task(state), msg)
    else:
        with pytest.raises(error, match="final task"):
            lifecycle.check_follow_up(task(state), msg)


@pytest.mark.parametrize("state", [states.SUBMITTED, states.WORKING, states.INPUT_REQUIRED,
                                   states.AUTH_REQUIRED])
@pytest.mark.parametrize("running", [False, True])
def test_a_non_final_task_takes_a_follow_up_now_or_after_its_run(state: int,
                                                                 running: bool) -> None:
    msg = Message(message_id="m", task_id="t1", role=Role.ROLE_USER, parts=[Part(text="x")])
    assert lifecycle.route_follow_up(task(state), msg, running=running) is running


@pytest.mark.parametrize("state", [states.SUBMITTED, states.WORKING])
def test_interrupted_only_refuses_follow_ups_on_working_tasks(state: int) -> None:
    msg = Message(message_id="m", task_id="t1", role=Role.ROLE_USER, parts=[Part(text="x")])
    with pytest.raises(UnsupportedOperationError, match="only when the task asks"):
        lifecycle.route_follow_up(task(state), msg, running=False, interrupted_only=True)
    assert not lifecycle.route_follow_up(task(states.INPUT_REQUIRED), msg, running=False,
                                         interrupted_only=True)


def test_follow_up_with_a_mismatching_context_is_invalid() -> None:
    msg = Message(message_id="m", task_id="t1", context_id="other", role=Role.ROLE_USER)
    with pytest.raises(InvalidParamsError) as info:
        lifecycle.check_follow_up(task(states.INPUT_REQUIRED), msg)
    assert info.value.violations[0].field == "message.contextId"


@pytest.mark.parametrize(("limit", "kept"), [(None, ["0", "1", "2"]), (0, []), (1, ["2"]),
                                             (2, ["1", "2"]), (5, ["0", "1", "2"])])
def test_history_length(limit: int | None, kept: list[str]) -> None:
    t = lifecycle.trim_history(task(history=3), limit)
    assert [m.parts[0].text for m in t.history] == kept


def test_negative_history_length_is_invalid() -> None:
    from a2a_grpc.generated.a2a_pb2 import GetTaskRequest

    with pytest.raises(InvalidParamsError, match="historyLength"):
        lifecycle.history_length_of(GetTaskRequest(id="t", history_length=-1))
    assert lifecycle.history_length_of(GetTaskRequest(id="t")) is None
    assert lifecycle.history_length_of(GetTaskRequest(id="t", history_length=0)) == 0


# -- generations (the A2A 1.1 draft, §3.2.7) --

def test_a_counted_task_starts_at_one_and_each_update_adds_one() -> None:
    created = lifecycle.apply(None, StreamResponse(task=Task(id="t1", context_id="c1",
                                                             generation=41)),
                              counted=True).task
    assert created is not None and created.generation == 1  # whatever the event said
    events = [status(states.WORKING), artifact("a", "x"), artifact("a", "y", append=True),
              status(states.WORKING, "progress"), status(states.COMPLETED)]
    for n, event in enumerate(events, start=2):
        lifecycle.apply(created, event)
        assert created.generation == n
        assert (event.status_update.generation or event.artifact_update.generation) == n


def test_a_refused_or_undone_update_leaves_the_generation() -> None:
    t = task()
    t.generation = 3
    step = lifecycle.apply(t, artifact("a", "x"))
    assert t.generation == 4
    step.undo()
    assert t.generation == 3 and not t.artifacts
    step = lifecycle.apply(t, status(states.COMPLETED, "done"))
    step.undo()
    assert t.generation == 3 and t.status.state == states.WORKING
    with pytest.raises(InvalidAgentResponseError):
        lifecycle.apply(t, artifact("b", "x", append=True))
    assert t.generation == 3


def test_an_uncounted_task_stays_at_zero_and_so_do_its_events() -> None:
    created = lifecycle.apply(None, StreamResponse(task=Task(id="t1", context_id="c1",
                                                             generation=7))).task
    assert created is not None and created.generation == 0
    event = artifact("a", "x")
    event.artifact_update.generation = 99  # an agent's own number is not passed on
    lifecycle.apply(created, event)
    assert created.generation == 0 and event.artifact_update.generation == 0
