"""The reducer changes a task in place; its undo puts back exactly what was there.

The runtime applies an event, then stores the task; when the store refuses,
the undo must leave the task byte for byte as it was, whatever the event did
(a status with or without a message, a new artifact, a replaced one, a chunk
with extensions and metadata) and whatever the task held before.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_grpc.core import lifecycle, states
from a2a_grpc.core.errors import InvalidAgentResponseError
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

STATES = [states.SUBMITTED, states.WORKING, states.INPUT_REQUIRED, states.AUTH_REQUIRED,
          states.COMPLETED, states.FAILED, states.CANCELED, states.REJECTED]
IDS = st.sampled_from(["a", "b", "c"])
words = st.text(max_size=4)
metadata = st.none() | st.dictionaries(words, st.integers(0, 9) | words, max_size=2)


@st.composite
def artifacts(draw: st.DrawFn, art_id: str | None = None) -> Artifact:
    art = Artifact(artifact_id=art_id or draw(IDS), name=draw(words),
                   parts=[Part(text=t) for t in draw(st.lists(words, max_size=3))],
                   extensions=draw(st.lists(st.sampled_from(["x", "y"]), max_size=2)))
    meta = draw(metadata)
    if meta is not None:
        art.metadata.update(meta)
    return art


@st.composite
def tasks(draw: st.DrawFn) -> Task:
    t = Task(id="t1", context_id="c1",
             history=[Message(message_id=m, role=Role.ROLE_USER) for m in draw(st.lists(words,
                                                                                    max_size=2))])
    if draw(st.booleans()):
        t.status.CopyFrom(TaskStatus(state=draw(st.sampled_from(STATES))))
        if draw(st.booleans()):
            t.status.message.CopyFrom(Message(message_id="s", parts=[Part(text="note")]))
        if draw(st.booleans()):
            t.status.timestamp.FromNanoseconds(draw(st.integers(0, 2**50)))
    seen: set[str] = set()
    for art in draw(st.lists(artifacts(), max_size=3)):
        if art.artifact_id not in seen:
            seen.add(art.artifact_id)
            t.artifacts.append(art)
    return t


@st.composite
def events(draw: st.DrawFn) -> StreamResponse:
    if draw(st.booleans()):
        st_ = TaskStatus(state=draw(st.sampled_from(STATES)))
        if draw(st.booleans()):
            st_.message.CopyFrom(Message(message_id="n", role=Role.ROLE_AGENT,
                                         parts=[Part(text=draw(words))]))
        return StreamResponse(status_update=TaskStatusUpdateEvent(
            task_id="t1", context_id="c1", status=st_))
    return StreamResponse(artifact_update=TaskArtifactUpdateEvent(
        task_id="t1", context_id="c1", artifact=draw(artifacts()), append=draw(st.booleans()),
        last_chunk=draw(st.booleans())))


@settings(max_examples=400, deadline=None)
@given(task=tasks(), event_list=st.lists(events(), min_size=1, max_size=4))
def test_undo_restores_the_task_byte_for_byte(task: Task, event_list: list[StreamResponse]
                                              ) -> None:
    for event in event_list:
        before = task.SerializeToString(deterministic=True)
        try:
            undo = lifecycle.apply(task, event).undo
        except InvalidAgentResponseError:
            assert task.SerializeToString(deterministic=True) == before  # refused: untouched
            continue
        changed = Task()
        changed.CopyFrom(task)
        undo()
        assert task.SerializeToString(deterministic=True) == before
        task.CopyFrom(changed)  # go on from the applied state
