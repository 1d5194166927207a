"""A Google ADK agent served through a2a_grpc.adapters.adk, on every binding,
with the real ADK and a model class that scripts its replies: a streamed
multi-turn conversation (a session per contextId), a long-running tool
pausing the task and resumed by the answer (text, or ADK's own
function_response data part), a cancel, an error, and a restart between two
turns with ADK's SQLite session service."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from google.protobuf import json_format

from a2a_grpc.adapters import wrap
from a2a_grpc.adapters.adk import AdkAgent
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import StackFactory
from tests.integration.adapters import adk_agents
from tests.integration.adapters.helpers import (
    BINDINGS,
    across_a_restart,
    answer_of,
    message,
    sent,
)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_streamed_multi_turn_conversation(stack: StackFactory, binding: str) -> None:
    served = AdkAgent(adk_agents.make_agent())
    s = await stack(served, card=served.card)
    client = s.binding(binding)
    events = await client.stream("SendStreamingMessage", message("hello"))
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert "".join(c.artifact.parts[0].text for c in chunks) == "you said hello (1 turns)"
    assert len(chunks) == 5 and chunks[-1].last_chunk
    assert [c.append for c in chunks] == [False, True, True, True, True]
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    again = await sent(client, message("more", chunks[0].context_id))
    assert answer_of(again) == "you said more (2 turns)"  # the session of the contextId
    other = await sent(client, message("elsewhere"))
    assert answer_of(other) == "you said elsewhere (1 turns)"


async def test_tool_calls_are_notes(stack: StackFactory) -> None:
    served = AdkAgent(adk_agents.make_agent())
    s = await stack(served, card=served.card)
    events = await s.binding("grpc").stream("SendStreamingMessage", message("lookup tea"))
    notes = [e.status_update.status.message.parts[0].text for e in events
             if e.HasField("status_update") and e.status_update.status.message.parts]
    assert "calling lookup" in notes and "lookup returned" in notes
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert "TEA" in "".join(e.artifact_update.artifact.parts[0].text for e in events
                            if e.HasField("artifact_update"))


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_long_running_tool_asks_and_a_text_answer_resumes(
        stack: StackFactory, binding: str) -> None:
    served = AdkAgent(adk_agents.make_agent())
    s = await stack(served, card=served.card)
    client = s.binding(binding)
    asked = await sent(client, message("ask_manager 5 EUR"))
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    text, call = asked.status.message.parts
    assert text.text.startswith("Waiting for ask_manager(")
    assert json_format.MessageToDict(call.metadata) == {"adk_type": "function_call",
                                                         "adk_is_long_running": True}
    assert call.data.struct_value.fields["name"].string_value == "ask_manager"
    done = await sent(client, message("approved by Bo", asked.context_id, asked.id))
    assert done.status.state == pb.TASK_STATE_COMPLETED
    assert "ask_manager said {'result': 'approved by Bo'}" in answer_of(done)


async def test_adks_own_function_response_part_answers(stack: StackFactory) -> None:
    served = AdkAgent(adk_agents.make_agent())
    s = await stack(served, card=served.card)
    client = s.binding("jsonrpc")
    asked = await sent(client, message("ask_manager 9 EUR"))
    call = json_format.MessageToDict(asked.status.message.parts[1].data)
    answer = pb.Part()
    json_format.ParseDict({"data": {"id": call["id"], "name": call["name"],
                                    "response": {"approved": False}},
                           "metadata": {"adk_type": "function_response"}}, answer)
    done = await sent(client, message("", asked.context_id, asked.id, parts=[answer]))
    assert done.status.state == pb.TASK_STATE_COMPLETED
    assert "ask_manager said {'approved': False}" in answer_of(done)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_cancel_stops_the_run(stack: StackFactory, binding: str) -> None:
    served = AdkAgent(adk_agents.make_agent())
    s = await stack(served, card=served.card)
    client = s.binding(binding)
    request = message("wait")
    request.configuration.return_immediately = True
    started = await sent(client, request)
    canceled = await client.call("CancelTask", pb.CancelTaskRequest(id=started.id))
    assert isinstance(canceled, pb.Task) and canceled.status.state == pb.TASK_STATE_CANCELED


@pytest.mark.parametrize("binding", BINDINGS)
async def test_an_error_fails_the_task_with_its_message(stack: StackFactory,
                                                        binding: str) -> None:
    served = AdkAgent(adk_agents.make_agent())
    s = await stack(served, card=served.card)
    failed = await sent(s.binding(binding), message("fail"))
    assert failed.status.state == pb.TASK_STATE_FAILED
    assert "QUOTA: the model is out of quota" in failed.status.message.parts[0].text


def test_the_card_and_where_sessions_live(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        served = wrap(adk_agents.make_agent())
    assert isinstance(served, AdkAgent)
    assert (served.card.name, served.card.description) == ("helper", "Helps with approvals.")
    assert [s.id for s in served.card.skills] == ["helper", "ask-manager", "lookup"]
    assert "sessions are in memory" in caplog.text


async def test_a_restart_between_turns_keeps_the_conversation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADK_SESSIONS", str(tmp_path / "sessions.db"))
    one, two = await across_a_restart("tests.integration.adapters.adk_agents:durable",
                                      f"sqlite:///{tmp_path}/tasks.db", "hello", "again")
    assert one["text"] == "you said hello (1 turns)"
    assert not any("sessions are in memory" in line for line in one["output"])
    assert two["text"] == "you said again (2 turns)"
