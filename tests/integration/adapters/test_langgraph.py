"""A LangGraph graph served through a2a_grpc.adapters.langgraph, on every
binding, with the real LangGraph and LangChain's fake chat model: a streamed
multi-turn conversation (the contextId is the thread), interrupt() as
INPUT_REQUIRED answered and resumed, a cancel mid-run, an exception, and a
server restart between two turns with a durable checkpointer."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from a2a_grpc.adapters import wrap
from a2a_grpc.adapters.langgraph import LangGraphAgent
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import StackFactory
from tests.integration.adapters.graphs import (
    as_dict,
    as_object,
    ask,
    ask_data,
    ask_name,
    boom,
    build,
    chat,
    wait,
)
from tests.integration.adapters.helpers import BINDINGS, across_a_restart, answer_of, message

ROOT = Path(__file__).resolve().parents[3]






@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_streamed_multi_turn_conversation(stack: StackFactory, binding: str) -> None:
    agent = LangGraphAgent(build(chat))
    s = await stack(agent, card=agent.card)
    client = s.binding(binding)
    events = await client.stream("SendStreamingMessage", message("hello world"))
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert len(chunks) > 3  # tokens, as they came
    assert "".join(c.artifact.parts[0].text for c in chunks) == "you said hello world (1 messages)"
    assert [c.append for c in chunks] == [False] + [True] * (len(chunks) - 1)
    assert chunks[-1].last_chunk and not any(c.last_chunk for c in chunks[:-1])
    notes = [e.status_update.status.message.parts[0].text for e in events
             if e.HasField("status_update") and e.status_update.status.message.parts]
    assert "chat done" in notes
    final = events[-1].status_update.status
    assert final.state == pb.TASK_STATE_COMPLETED
    context_id = chunks[0].context_id

    sent = await client.call("SendMessage", message("again", context_id=context_id))
    assert isinstance(sent, pb.SendMessageResponse)
    assert sent.task.context_id == context_id and sent.task.id != chunks[0].task_id
    assert answer_of(sent.task) == "you said again (3 messages)"  # the thread's history
    other = await client.call("SendMessage", message("elsewhere"))
    assert isinstance(other, pb.SendMessageResponse)
    assert answer_of(other.task) == "you said elsewhere (1 messages)"  # another thread


async def asked_for_a_name(stack: StackFactory, binding: str,
                           *nodes: Any) -> tuple[Any, pb.Task]:
    """A graph of `nodes` served, sent "hi": its client, and the task its
    interrupt paused as INPUT_REQUIRED asking the name."""
    agent = LangGraphAgent(build(*nodes))
    s = await stack(agent, card=agent.card)
    client = s.binding(binding)
    asked = await client.call("SendMessage", message("hi"))
    assert isinstance(asked, pb.SendMessageResponse)
    task = asked.task
    assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert task.status.message.parts[0].text == "What is your name?"
    return client, task


@pytest.mark.parametrize("binding", BINDINGS)
async def test_an_interrupt_asks_and_the_answer_resumes(stack: StackFactory,
                                                        binding: str) -> None:
    client, task = await asked_for_a_name(stack, binding, chat, ask)
    done = await client.call("SendMessage", message("Ann", task.context_id, task.id))
    assert isinstance(done, pb.SendMessageResponse)
    assert done.task.status.state == pb.TASK_STATE_COMPLETED
    assert answer_of(done.task).endswith("Hi Ann")


@pytest.mark.parametrize("binding", BINDINGS)
async def test_messages_nodes_return_without_a_chat_model_are_the_answer(
        stack: StackFactory, binding: str) -> None:
    """A graph as LangGraph's docs write one without a model: nodes return
    ("ai", text), an assistant dict or an AIMessage; each is an artifact of
    its own, whole, in order, on the blocking and the streaming call; the
    user's own message is not one."""
    client, task = await asked_for_a_name(stack, binding, ask_name, as_dict, as_object)
    assert not task.artifacts
    events = await client.stream("SendStreamingMessage", message("Ada", task.context_id,
                                                                 task.id))
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    answers = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert [a.parts[0].text for a in answers] == ["hello Ada", "nice to meet you", "bye"]
    assert len({a.artifact_id for a in answers}) == 3
    done = await client.call("GetTask", pb.GetTaskRequest(id=task.id))
    assert isinstance(done, pb.Task)
    assert [a.parts[0].text for a in done.artifacts] == ["hello Ada", "nice to meet you", "bye"]


async def test_an_interrupt_with_data_asks_with_a_data_part(stack: StackFactory) -> None:
    agent = LangGraphAgent(build(ask_data))
    s = await stack(agent, card=agent.card)
    asked = await s.binding("jsonrpc").call("SendMessage", message("pay"))
    assert isinstance(asked, pb.SendMessageResponse)
    question = asked.task.status.message.parts[0]
    assert question.WhichOneof("content") == "data"
    assert question.data.struct_value.fields["need"].string_value == "approval"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_cancel_stops_the_run(stack: StackFactory, binding: str) -> None:
    agent = LangGraphAgent(build(wait))
    s = await stack(agent, card=agent.card)
    client = s.binding(binding)
    request = message("wait")
    request.configuration.return_immediately = True
    started = await client.call("SendMessage", request)
    assert isinstance(started, pb.SendMessageResponse)
    canceled = await client.call("CancelTask", pb.CancelTaskRequest(id=started.task.id))
    assert isinstance(canceled, pb.Task)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert s.handler.live_tasks == 0 or await _until_idle(s)


async def _until_idle(s: object) -> bool:
    for _ in range(100):
        if s.handler.live_tasks == 0:  # type: ignore[attr-defined]
            return True
        await asyncio.sleep(0.02)
    return False


@pytest.mark.parametrize("binding", BINDINGS)
async def test_an_exception_fails_the_task_with_its_message(stack: StackFactory,
                                                            binding: str) -> None:
    agent = LangGraphAgent(build(boom))
    s = await stack(agent, card=agent.card)
    failed = await s.binding(binding).call("SendMessage", message("go"))
    assert isinstance(failed, pb.SendMessageResponse)
    assert failed.task.status.state == pb.TASK_STATE_FAILED
    assert "boom: the tool is down" in failed.task.status.message.parts[0].text


def test_the_card_and_where_state_lives(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        agent = wrap(build(chat, name="travel planner"))
    assert isinstance(agent, LangGraphAgent)
    assert agent.card.name == "travel planner" and agent.card.skills[0].id == "travel-planner"
    assert "in memory" in caplog.text
    caplog.clear()
    from langgraph.graph import END, START, MessagesState, StateGraph

    bare = StateGraph(MessagesState)
    bare.add_node("chat", chat)
    bare.add_edge(START, "chat")
    bare.add_edge("chat", END)
    with caplog.at_level(logging.WARNING):
        LangGraphAgent(bare.compile())
    assert "no checkpointer" in caplog.text


async def test_a_restart_between_turns_keeps_the_conversation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve --agent` given the graph's async factory, on the SQLite default
    store, with LangGraph's SQLite checkpointer: the second turn, after a
    restart, continues the thread."""
    monkeypatch.setenv("LANGGRAPH_DB", str(tmp_path / "threads.db"))
    one, two = await across_a_restart("tests.integration.adapters.graphs:make_durable",
                                      f"sqlite:///{tmp_path}/tasks.db", "hello",
                                      "still there?")
    assert one["status"]["state"] == "TASK_STATE_COMPLETED"
    assert one["text"] == "you said hello (1 messages)"
    assert two["text"] == "you said still there? (3 messages)"
