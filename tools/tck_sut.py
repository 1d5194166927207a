"""The agent the 1.0-dev conformance kit drives (`make tck10`), written on the
public API alone: what it does is chosen by the messageId's prefix, as the
kit's scenarios (scenarios/*.feature in a2aproject/a2a-tck, branch 1.0-dev)
describe. Served with `a2a-grpc serve --agent tools.tck_sut:TckSut`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from a2a_grpc import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.generated.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentProvider,
    AgentSkill,
    Part,
)

STREAMING_TIMEOUT = 2.0  # seconds: the kit's; the resubscribe task outlives two of them
Step = Callable[[TaskEvents], Awaitable[None]]


def _file() -> Part:
    return Part(raw=b"tck", media_type="text/plain", filename="output.txt")


async def _lifecycle(events: TaskEvents, text: str) -> None:
    await events.working()
    await events.artifact(text)
    await events.complete()


async def _chunked(events: TaskEvents) -> None:
    await events.working()
    artifact = await events.artifact("chunk-1 ")
    await events.artifact("chunk-2", artifact_id=artifact, append=True, last_chunk=True)
    await events.complete()


async def _long(events: TaskEvents) -> None:
    await events.working()
    await asyncio.sleep(2 * STREAMING_TIMEOUT)
    await events.complete()


async def _data(events: TaskEvents) -> None:
    part = Part()
    part.data.struct_value.update({"key": "value", "count": 42})
    await events.artifact([part])
    await events.complete()


async def _then_complete(events: TaskEvents, content: str | list[Part]) -> None:
    await events.artifact(content)
    await events.complete()


# Longest prefixes first: "tck-artifact-file-url" before "tck-artifact-file".
SCENARIOS: list[tuple[str, Step]] = sorted([
    ("tck-complete-task", lambda e: e.complete("Hello from TCK")),
    ("tck-artifact-text", lambda e: _then_complete(e, "Generated text content")),
    ("tck-artifact-file-url", lambda e: _then_complete(e, [Part(
        url="https://example.com/output.txt", media_type="text/plain", filename="output.txt")])),
    ("tck-artifact-file", lambda e: _then_complete(e, [_file()])),
    ("tck-artifact-data", _data),
    ("tck-message-response", lambda e: e.reply("Direct message response")),
    ("tck-input-required", lambda e: e.require_input()),
    ("tck-reject-task", lambda e: e.reject("rejected")),
    ("tck-stream-001", lambda e: _lifecycle(e, "Stream hello from TCK")),
    ("tck-stream-002", lambda e: e.complete()),
    ("tck-stream-003", lambda e: _lifecycle(e, "Stream task lifecycle")),
    ("tck-stream-ordering-001", lambda e: _lifecycle(e, "Ordered output")),
    ("tck-stream-artifact-text", lambda e: _lifecycle(e, "Streamed text content")),
    ("tck-stream-artifact-file", lambda e: _then_complete_working(e, [_file()])),
    ("tck-stream-artifact-chunked", _chunked),
    ("test-resubscribe-message-id", _long),
], key=lambda s: -len(s[0]))


async def _then_complete_working(events: TaskEvents, content: list[Part]) -> None:
    await events.working()
    await _then_complete(events, content)


class TckSut(AgentExecutor):
    """The kit's system under test."""

    def __init__(self) -> None:
        self.card = AgentCard(
            name="a2a-grpc TCK system under test",
            description="Does what the conformance kit's scenarios say, by messageId prefix.",
            version="1.0.0",
            provider=AgentProvider(organization="a2a-grpc",
                                   url="https://github.com/a2aproject/a2a-tck"),
            capabilities=AgentCapabilities(streaming=True, push_notifications=True),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=[AgentSkill(id="tck", name="TCK Conformance", tags=["tck"],
                               description="Handles the conformance kit's messages")])

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        message_id = context.message.message_id
        for prefix, step in SCENARIOS:
            if message_id.startswith(prefix):
                await step(events)
                return
        await events.complete(f"Unhandled messageId prefix: {message_id}")
