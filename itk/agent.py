"""The agent the A2A integration test kit (a2aproject/a2a-itk) drives, on the
public agent API and this project's client. Served with
`a2a-grpc serve --agent itk.agent:TraversalAgent` (tools/itk.py does it).

A message carries an `itk.Instruction` (instruction.proto): a binary part
(media type application/x-protobuf, or the file name instruction.bin), or
base64 in a text part. The agent does what it says:
- `return_response`: answer with its text;
- `steps`: each instruction in turn, the answers concatenated;
- `call_agent`: read the card at `agent_card_uri`, call that agent over the
  binding `transport` names with the nested instruction (streaming or not;
  with a webhook, `push_notification`; or `resubscribe`: stream, hang up after
  the first event, subscribe again, and cancel the task if it did not end),
  and answer with the texts the agent answered.
The task ends COMPLETED with the answers, one per line; FAILED with the reason
when a step fails. `hold_task` anywhere keeps the task WORKING a while (the
answers and "task-finished" in a status message first) for a subscriber to
find, then completes it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import uuid
from collections.abc import AsyncGenerator, Iterable
from typing import cast

from google.protobuf.message import DecodeError

from a2a_grpc import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.generated import a2a_pb2 as pb
from itk.instruction_pb2 import CallAgent, Instruction

PROTOBUF = "application/x-protobuf"
FINISHED = "task-finished"
BINDINGS = {"jsonrpc": "JSONRPC", "grpc": "GRPC", "http_json": "HTTP+JSON",
            "http+json": "HTTP+JSON", "rest": "HTTP+JSON"}
HOLD_UPDATES, HOLD_EVERY_S = 5, 2.0  # how long a held task stays WORKING


def instruction_of(message: pb.Message) -> Instruction | None:
    for part in message.parts:
        kind = part.WhichOneof("content")
        if kind == "raw" and (part.media_type == PROTOBUF or part.filename == "instruction.bin"):
            found = _parsed(part.raw)
        elif kind == "text":
            found = _parsed(_base64(part.text))
        else:
            continue
        if found is not None:
            return found
    return None


def _base64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _parsed(raw: bytes) -> Instruction | None:
    if not raw:
        return None
    inst = Instruction()
    try:
        inst.ParseFromString(raw)
    except DecodeError:
        return None
    return inst if inst.WhichOneof("step") else None


def holds(inst: Instruction) -> bool:
    """Does any step ask to keep the task WORKING?"""
    step = inst.WhichOneof("step")
    if step == "return_response":
        return inst.return_response.hold_task
    if step == "steps":
        return any(holds(i) for i in inst.steps.instructions)
    return False


def as_message(inst: Instruction) -> pb.Message:
    return pb.Message(role=pb.ROLE_USER, message_id=str(uuid.uuid4()), parts=[pb.Part(
        raw=inst.SerializeToString(), media_type=PROTOBUF, filename="instruction.bin")])


def texts_of(event: pb.StreamResponse) -> list[str]:
    """The agent's texts an event carries: a reply, or a status message."""
    kind = event.WhichOneof("payload")
    message = None
    if kind == "message":
        message = event.message
    elif kind == "task" and event.task.status.HasField("message"):
        message = event.task.status.message
    elif kind == "status_update" and event.status_update.status.HasField("message"):
        message = event.status_update.status.message
    return [] if message is None else [p.text for p in message.parts if p.text]


class TraversalAgent(AgentExecutor):
    """Does what the kit's instruction says (see the module's doc)."""

    def __init__(self) -> None:
        self.card = pb.AgentCard(
            name="a2a-grpc ITK agent",
            description="Follows the A2A integration test kit's traversal instructions.",
            version="1.0.0",
            capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True),
            default_input_modes=["text/plain", PROTOBUF],
            default_output_modes=["text/plain"],
            skills=[pb.AgentSkill(id="itk", name="ITK traversal", tags=["itk"],
                                  description="Calls other agents as the instruction says")])

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        inst = instruction_of(context.message)
        if inst is None:
            await events.fail("No valid instruction found in request")
            return
        await events.working()
        try:
            answer = "\n".join(await self.follow(inst))
        except Exception as exc:  # a peer failed: the task says why
            await events.fail(f"{type(exc).__name__}: {exc}")
            return
        if not holds(inst):
            await events.complete(answer)
            return
        await events.working(f"{answer}\n{FINISHED}")
        for _ in range(HOLD_UPDATES):  # a CancelTask stops this (asyncio cancellation)
            await asyncio.sleep(HOLD_EVERY_S)
            await events.working()
        await events.complete(f"{answer}\n{FINISHED}")

    async def follow(self, inst: Instruction) -> list[str]:
        step = inst.WhichOneof("step")
        if step == "return_response":
            return [inst.return_response.response]
        if step == "steps":
            out: list[str] = []
            for each in inst.steps.instructions:
                out += await self.follow(each)
            return out
        if step == "call_agent":
            return await call(inst.call_agent)
        raise ValueError("an instruction with no step")


async def call(step: CallAgent) -> list[str]:
    binding = BINDINGS.get(step.transport.lower())
    if binding is None:
        raise ValueError(f"unknown transport {step.transport!r}")
    request = pb.SendMessageRequest(message=as_message(step.instruction))
    if step.HasField("push_notification"):
        url = step.push_notification.url
        if not url:
            raise ValueError("push_notification names no URL")
        if not url.startswith(("http://", "https://")):
            url = "http://" + url
        request.configuration.task_push_notification_config.url = url + "/notifications"
        request.configuration.task_push_notification_config.token = "itk-token"
    async with await A2AClient.connect(step.agent_card_uri,
                                       ClientOptions(prefer=(binding,))) as client:
        if step.HasField("resubscribe"):
            return await _resubscribe(client, request)
        if step.streaming:
            out: list[str] = []
            async for event in client.send_streaming_message(request):
                out += texts_of(event)
            return out
        sent = await client.send_message(request)
        return texts_of(pb.StreamResponse(task=sent.task) if sent.HasField("task")
                        else pb.StreamResponse(message=sent.message))


async def _resubscribe(client: A2AClient, request: pb.SendMessageRequest) -> list[str]:
    """Stream, hang up after the first event, subscribe again; cancel the task
    unless a status said it finished."""
    task_id = ""
    stream = client.send_streaming_message(request)
    async for event in stream:
        task_id = event.task.id or event.status_update.task_id or event.artifact_update.task_id
        break
    await cast(AsyncGenerator[pb.StreamResponse, None], stream).aclose()
    if not task_id:
        raise ValueError("the stream's first event names no task")
    out: list[str] = []
    async for event in client.subscribe_to_task(pb.SubscribeToTaskRequest(id=task_id)):
        texts = texts_of(event)
        if event.HasField("task") and not any(FINISHED in t for t in texts):
            texts += _agent_texts(event.task.history)  # it may have said so before
        finished = [t for t in texts if FINISHED in t]
        if finished:
            return out + [t.replace(FINISHED, "") for t in finished]
        out += texts
    await client.cancel_task(pb.CancelTaskRequest(id=task_id))
    return out


def _agent_texts(history: Iterable[pb.Message]) -> list[str]:
    return [p.text for m in history if m.role == pb.ROLE_AGENT for p in m.parts if p.text]
