"""Part media types checked against the card's input modes before the agent
runs (spec §3.3.2, ContentTypeNotSupportedError: -32005, HTTP 400,
INVALID_ARGUMENT in 1.0.1; 0.3's REST answers 415), on every binding and
dialect, and an agent's own rule."""

from __future__ import annotations

import base64
from typing import Any

import grpc
import pytest

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.core.media import accepted, matches, media_type_of, unknown_modes
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.generated.a2a_v03_pb2_grpc import A2AServiceStub as V03Stub
from tests.agents import FilesDemo
from tests.bindings import Binding, CallFailed
from tests.conftest import StackFactory
from tests.fakes import ScriptedAgent
from tests.grpc_errors import fails

UNKNOWN = "application/x-unknown"


def with_part(part: pb.Part, text: str = "hello") -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=pb.Message(
        message_id=f"m-{part.media_type}-{part.WhichOneof('content')}-{text}",
        role=pb.ROLE_USER, parts=[pb.Part(text=text), part]))


async def send(client: Binding, request: pb.SendMessageRequest) -> pb.SendMessageResponse:
    sent = await client.call("SendMessage", request)
    assert isinstance(sent, pb.SendMessageResponse)
    return sent


@pytest.mark.parametrize("binding", ["grpc", "jsonrpc", "rest"])
@pytest.mark.parametrize("rpc", ["SendMessage", "SendStreamingMessage"])
async def test_an_unknown_type_is_refused_before_the_agent_runs(
        stack: StackFactory, binding: str, rpc: str) -> None:
    s = await stack()  # the demo agent: its card takes text/plain alone
    client = s.binding(binding)
    request = with_part(pb.Part(raw=b"\x00\x01", media_type=UNKNOWN, filename="x.bin"))
    with pytest.raises(CallFailed) as info:
        await (client.call(rpc, request) if rpc == "SendMessage" else client.stream(rpc, request))
    failed = info.value
    assert failed.reason == "CONTENT_TYPE_NOT_SUPPORTED"
    assert failed.code == {"grpc": grpc.StatusCode.INVALID_ARGUMENT, "jsonrpc": -32005,
                           "rest": 400}[binding]
    assert UNKNOWN in failed.message and "text/plain" in failed.message
    listed = await client.call("ListTasks", pb.ListTasksRequest())
    assert isinstance(listed, pb.ListTasksResponse) and listed.total_size == 0  # none started


@pytest.mark.parametrize(("part", "accepted"), [
    (pb.Part(data=None), False),  # application/json, by its kind
    (pb.Part(text="# hi", media_type="text/markdown"), False),
    (pb.Part(text="hi", media_type="text/plain; charset=utf-8"), True),
    (pb.Part(text="hi", media_type="TEXT/Plain"), True),
    (pb.Part(url="https://example.com/a.png", media_type="image/png"), False),
])
async def test_what_the_demo_takes(stack: StackFactory, part: pb.Part, accepted: bool) -> None:
    if part.WhichOneof("content") is None:
        part.data.string_value = "x"
    s = await stack()
    client = s.binding("jsonrpc")
    if accepted:
        sent = await send(client, with_part(part))
        assert sent.task.status.state == pb.TASK_STATE_COMPLETED
    else:
        with pytest.raises(CallFailed) as info:
            await client.call("SendMessage", with_part(part))
        assert info.value.code == -32005


async def test_wildcards_and_skills_widen_what_is_taken(stack: StackFactory) -> None:
    agent = FilesDemo()  # image/* and application/pdf besides text/plain
    agent.card.skills[0].input_modes.append("application/vnd.example+json")
    s = await stack(agent, card=agent.card)
    for binding in ("grpc", "jsonrpc", "rest"):
        client = s.binding(binding)
        for media_type in ("image/png", "image/webp", "application/pdf",
                           "application/vnd.example+json"):
            part = pb.Part(raw=b"\x89PNG", media_type=media_type, filename="f")
            sent = await send(client, with_part(part, f"{binding} {media_type}"))
            assert sent.task.status.state == pb.TASK_STATE_COMPLETED
            assert sent.task.history[0].parts[1].media_type == media_type  # reached it whole
        with pytest.raises(CallFailed):
            await client.call("SendMessage", with_part(pb.Part(raw=b"x", media_type="video/mp4")))


async def test_the_earlier_generations_are_refused_in_their_own_words(
        stack: StackFactory) -> None:
    s = await stack()
    raw = base64.b64encode(b"x").decode()
    async with s.session.post(s.base_url + "/", json={
            "jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
                "kind": "message", "role": "user", "messageId": "m03", "parts": [
                    {"kind": "file", "file": {"bytes": raw, "mimeType": UNKNOWN}}]}}}) as resp:
        body: dict[str, Any] = await resp.json()
    assert body["error"]["code"] == -32005 and UNKNOWN in body["error"]["message"]
    async with s.session.post(s.base_url + "/v1/message:send", json={"message": {
            "messageId": "m03r", "role": "ROLE_USER", "content": [
                {"file": {"fileWithBytes": raw, "mimeType": UNKNOWN}}]}}) as resp:
        assert resp.status == 415  # 0.3's REST mapping
    seen = await fails(V03Stub(s.channel).SendMessage(v03.SendMessageRequest(request=v03.Message(
        message_id="m03g", role=v03.ROLE_USER, content=[v03.Part(file=v03.FilePart(
            file_with_bytes=b"x", mime_type=UNKNOWN))]))))
    assert seen.code == grpc.StatusCode.INVALID_ARGUMENT
    async with s.session.post(s.base_url + "/", json={
            "jsonrpc": "2.0", "id": 2, "method": "tasks/send", "params": {
                "id": "t01", "message": {"role": "user", "parts": [
                    {"type": "file", "file": {"bytes": raw, "mimeType": UNKNOWN}}]}}}) as resp:
        body = await resp.json()
    assert body["error"]["code"] == -32005


class TakesPdfOnly(AgentExecutor):
    """An agent with its own rule: PDFs and text, whatever its card says."""

    def __init__(self) -> None:
        self.card = pb.AgentCard(name="pdf", description="d", version="1",
                                 default_input_modes=["text/plain"])
        self.seen: list[str] = []

    def accepts(self, media_type: str, card: pb.AgentCard) -> bool:
        return media_type in ("application/pdf", "text/plain")

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        self.seen += [media_type_of(p) for p in context.message.parts]
        await events.complete()


async def test_an_agent_rule_replaces_the_check_and_no_card_means_no_check(
        stack: StackFactory) -> None:
    agent = TakesPdfOnly()
    s = await stack(agent, card=agent.card)
    client = s.binding("grpc")
    await client.call("SendMessage", with_part(pb.Part(raw=b"%PDF", media_type="application/pdf")))
    assert agent.seen == ["text/plain", "application/pdf"]
    with pytest.raises(CallFailed):
        await client.call("SendMessage", with_part(pb.Part(raw=b"x", media_type="image/png")))

    async def done(_: RequestContext, events: TaskEvents) -> None:
        await events.complete()

    s = await stack(ScriptedAgent(done))  # no card of its own: the server's default card
    sent = await send(s.binding("grpc"), with_part(pb.Part(raw=b"x", media_type=UNKNOWN)))
    assert sent.task.status.state == pb.TASK_STATE_COMPLETED


def test_matching() -> None:
    assert matches("image/png", ["image/*"]) and matches("image/png", ["*/*"])
    assert matches("Text/Plain; charset=utf-8", ["text/plain"])
    assert not matches("image/png", ["text/*", "application/png"])
    assert not matches("application/octet-stream-x", ["application/octet-stream"])
    assert media_type_of(pb.Part(text="x")) == "text/plain"
    assert media_type_of(pb.Part(url="https://x/y")) == "application/octet-stream"
    part = pb.Part()
    part.data.string_value = "x"
    assert media_type_of(part) == "application/json"


def test_answers_are_remembered_per_card_object_and_bounded() -> None:
    """`accepted` answers from memory while the card is the same object; a new card
    (what a change of the served card is) is asked afresh; and types past the bound
    are still answered right, only not remembered (clients choose them)."""
    text_only = pb.AgentCard(default_input_modes=["text/plain"])
    assert accepted("text/plain", text_only) and not accepted("image/png", text_only)
    images = pb.AgentCard(default_input_modes=["text/plain"],
                          skills=[pb.AgentSkill(id="s", input_modes=["image/*"])])
    assert accepted("image/png", images) and not accepted("image/png", text_only)
    for i in range(200):
        assert accepted(f"image/x-{i}", images) and not accepted(f"audio/x-{i}", images)
    assert accepted("image/png", images) and not accepted("application/json", images)


def test_bare_words_in_a_card_are_read_as_the_drafts_meant_them() -> None:
    assert matches("text/plain", ["text"]) and matches("text/markdown", ["TEXT"])
    assert matches("application/json", ["data"]) and matches("application/json", ["json"])
    assert matches("application/pdf", ["file"]) and matches("image/png", ["image"])
    assert not matches("image/png", ["text", "data"])
    assert not matches("text/plain", ["task-status"])
    card = pb.AgentCard(default_input_modes=["text", "text/plain", "bogus"],
                        default_output_modes=["task-status", "bogus"],
                        skills=[pb.AgentSkill(id="s", input_modes=["file", "x-y"])])
    assert unknown_modes(card) == ["bogus", "task-status", "x-y"]
    assert unknown_modes(pb.AgentCard(default_input_modes=["text/*", "*/*", "image/*"])) == []


async def test_a_card_of_bare_words_takes_text_on_every_binding(stack: StackFactory) -> None:
    async def done(context: RequestContext, events: TaskEvents) -> None:
        await events.artifact(context.text)
        await events.complete()

    agent = ScriptedAgent(done)
    card = pb.AgentCard(name="w", description="d", version="1", default_input_modes=["text"],
                        default_output_modes=["text", "task-status"])
    agent.card = card  # type: ignore[attr-defined]
    s = await stack(agent, card=card)
    for binding in ("grpc", "jsonrpc", "rest"):
        client = s.binding(binding)
        sent = await send(client, pb.SendMessageRequest(message=pb.Message(
            message_id=f"w-{binding}", role=pb.ROLE_USER, parts=[pb.Part(text="hi")])))
        assert sent.task.status.state == pb.TASK_STATE_COMPLETED
        with pytest.raises(CallFailed) as info:
            await client.call("SendMessage", with_part(pb.Part(raw=b"x", media_type=UNKNOWN)))
        assert info.value.reason == "CONTENT_TYPE_NOT_SUPPORTED"
