"""A Pydantic AI agent served through a2a_grpc.adapters.pydantic_ai, on every
binding, with the real Pydantic AI and its FunctionModel: a streamed
multi-turn conversation (history per contextId, in our store), a tool that
needs approval pausing the task and resumed by the answer, a deferred tool
answered by the client, structured output, a tool failure, a cancel, and a
restart between two turns on the SQLite default."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from a2a_grpc.adapters import wrap
from a2a_grpc.adapters.pydantic_ai import PydanticAIAgent
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import StackFactory
from tests.integration.adapters import pydantic_agents as agents
from tests.integration.adapters.helpers import (
    BINDINGS,
    across_a_restart,
    answer_of,
    message,
    sent,
)
from tests.processes import reap, start_server


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_streamed_multi_turn_conversation(stack: StackFactory, binding: str) -> None:
    served = PydanticAIAgent(agents.agent)
    s = await stack(served, card=served.card)
    client = s.binding(binding)
    events = await client.stream("SendStreamingMessage", message("hello"))
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert "".join(c.artifact.parts[0].text for c in chunks) == "you said hello (1 prompts)"
    assert len(chunks) == 5 and chunks[-1].last_chunk  # a chunk a word, as the model streamed
    assert [c.append for c in chunks] == [False, True, True, True, True]
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    context_id = chunks[0].context_id
    again = await sent(client, message("more", context_id))
    assert answer_of(again) == "you said more (2 prompts)"  # the history of the contextId
    other = await sent(client, message("elsewhere"))
    assert answer_of(other) == "you said elsewhere (1 prompts)"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_tool_that_needs_approval_pauses_and_the_answer_resumes(
        stack: StackFactory, binding: str) -> None:
    served = PydanticAIAgent(agents.agent)
    s = await stack(served, card=served.card)
    client = s.binding(binding)
    asked = await sent(client, message("delete_file notes.txt"))
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    question = asked.status.message.parts
    assert question[0].text == 'Approve delete_file({"name":"notes.txt"})? Answer yes or no.'
    waiting = question[1].data.struct_value.fields["waiting"].list_value.values[0]
    assert waiting.struct_value.fields["kind"].string_value == "approval"
    done = await sent(client, message("yes", asked.context_id, asked.id))
    assert done.status.state == pb.TASK_STATE_COMPLETED
    assert answer_of(done) == "delete_file: deleted notes.txt"
    denied = await sent(client, message("delete_file secrets.txt"))
    refused = await sent(client, message("no, keep it", denied.context_id, denied.id))
    assert refused.status.state == pb.TASK_STATE_COMPLETED
    assert answer_of(refused) == "delete_file: no, keep it"  # the model was told the denial


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_paused_approval_belongs_to_its_task_not_its_context(
        stack: StackFactory, binding: str) -> None:
    """Task T waits on an approval; a new task on T's context is a new prompt
    (it neither answers nor denies T's approval, and does not see T's paused
    turn); T stays INPUT_REQUIRED, and its own answer runs the tool; the
    conversation then holds both turns."""
    served = PydanticAIAgent(agents.agent)
    s = await stack(served, card=served.card)
    client = s.binding(binding)
    asked = await sent(client, message("delete_file report.txt"))
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    other = await sent(client, message("my name is Zed", asked.context_id))
    assert other.id != asked.id and other.status.state == pb.TASK_STATE_COMPLETED
    assert answer_of(other) == "you said my name is Zed (1 prompts)"
    got: Any = await client.call("GetTask", pb.GetTaskRequest(id=asked.id))
    assert got.status.state == pb.TASK_STATE_INPUT_REQUIRED
    done = await sent(client, message("yes", asked.context_id, asked.id))
    assert done.status.state == pb.TASK_STATE_COMPLETED
    assert answer_of(done) == "delete_file: deleted report.txt"
    after = await sent(client, message("and now", asked.context_id))
    assert answer_of(after) == "you said and now (3 prompts)"  # both turns, then this


async def test_a_deferred_tool_takes_its_result_from_the_answer(stack: StackFactory) -> None:
    served = PydanticAIAgent(agents.agent)
    s = await stack(served, card=served.card)
    client = s.binding("grpc")
    asked = await sent(client, message("lookup Ada"))
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert asked.status.message.parts[0].text == 'The result of lookup({"name":"Ada"})?'
    done = await sent(client, message("Ada Lovelace, 1815", asked.context_id, asked.id))
    assert answer_of(done) == "lookup: Ada Lovelace, 1815"


async def test_structured_output_is_a_data_part(stack: StackFactory) -> None:
    served = PydanticAIAgent(agents.structured)
    s = await stack(served, card=served.card)
    done = await sent(s.binding("rest"), message("weather in Oslo?"))
    assert done.status.state == pb.TASK_STATE_COMPLETED
    data = done.artifacts[-1].parts[0].data.struct_value.fields
    assert data["city"].string_value == "Oslo" and data["degrees"].number_value == 4


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_failing_tool_fails_the_task_with_its_message(stack: StackFactory,
                                                              binding: str) -> None:
    served = PydanticAIAgent(agents.agent)
    s = await stack(served, card=served.card)
    failed = await sent(s.binding(binding), message("broken billing"))
    assert failed.status.state == pb.TASK_STATE_FAILED
    assert "the billing service is down" in failed.status.message.parts[0].text


@pytest.mark.parametrize("binding", BINDINGS)
async def test_cancel_stops_the_run(stack: StackFactory, binding: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    async def waits(messages: Any, info: Any) -> AsyncIterator[str]:
        await asyncio.Event().wait()  # never set: the model streams nothing until cancelled
        yield "not reached"

    served = PydanticAIAgent(Agent(FunctionModel(stream_function=waits), name="slow"))
    s = await stack(served, card=served.card)
    client = s.binding(binding)
    request = message("think")
    request.configuration.return_immediately = True
    started = await sent(client, request)
    canceled = await client.call("CancelTask", pb.CancelTaskRequest(id=started.id))
    assert isinstance(canceled, pb.Task) and canceled.status.state == pb.TASK_STATE_CANCELED


def test_the_card_comes_from_the_agent() -> None:
    served = wrap(agents.agent)
    assert isinstance(served, PydanticAIAgent)
    card = served.card
    assert (card.name, card.description) == ("helper", "Helps with files.")
    assert [s.id for s in card.skills] == ["helper", "delete-file", "lookup", "broken"]
    assert card.skills[1].description == "Delete a file (asks first)."


async def test_a_restart_between_turns_keeps_the_conversation(tmp_path: Path) -> None:
    one, two = await across_a_restart("tests.integration.adapters.pydantic_agents:agent",
                                      f"sqlite:///{tmp_path}/tasks.db", "hello", "again")
    assert one["text"] == "you said hello (1 prompts)"
    assert two["text"] == "you said again (2 prompts)"
    assert not any("kept in memory" in line for line in one["output"])


async def test_a_memory_store_is_said_to_lose_conversations() -> None:
    server = await start_server("serve", "--store", "memory", "--agent",
                                "tests.integration.adapters.pydantic_agents:agent")
    reap(server.proc)
    assert any("conversations (PydanticAIAgent) are kept in memory" in line
               for line in server.output), server.output





async def test_a_paused_turn_kept_by_the_release_before_is_answered_by_a_follow_up() -> None:
    """The release before kept one paused turn per conversation, naming no task:
    it is read as the paused turn of whichever task follows up, and a new task
    of the conversation starts from before that turn."""
    from a2a_grpc.adapters.pydantic_ai import ANY_TASK, _Conversation

    result: Any = await agents.agent.run(
        "delete_file old.txt", output_type=[str, agents.DeferredToolRequests])
    waiting = result.output
    old = json.dumps({"messages": json.loads(result.all_messages_json()),
                      "approvals": [c.tool_call_id for c in waiting.approvals],
                      "calls": []}).encode()
    talk = _Conversation.load(old)
    assert talk.messages == [] and list(talk.paused) == [ANY_TASK]
    assert talk.paused[ANY_TASK].approvals == [waiting.approvals[0].tool_call_id]
    again = _Conversation.load(talk.dump())
    assert list(again.paused) == [ANY_TASK] and again.paused[ANY_TASK].base == 0
