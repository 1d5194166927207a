"""The built-in demo agent: what `a2a-grpc serve` runs unless told otherwise.

- any text T: a task SUBMITTED -> WORKING -> COMPLETED with one artifact `echo: T`
- `stream N`: N chunks `chunk i/N` of one artifact, then COMPLETED;
  `stream N B`: each chunk padded with dots to B bytes (benchmarks)
- `slow` / `slow S`: WORKING for 30 (or S) seconds with a note every 2 s, then
  the echo; cancel it at any point
- `ask`: INPUT_REQUIRED with a question; the answer completes the task
- `file NAME`: a file artifact NAME (text/plain bytes) and a data artifact
  describing it
- `reply T`: a direct Message `T`, no task
- `whoami`: a direct Message naming the caller (its subject, scheme and
  scopes; "anonymous" when the server asks for no credentials)

Its extended card (GetExtendedAgentCard) adds the `whoami` skill and says
whom it was made for.
"""

from __future__ import annotations

import asyncio

from google.protobuf.struct_pb2 import Value

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.core import states
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.version import VERSION
from a2a_grpc.generated.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill, Part

MAX_STREAM_CHUNKS = 10_000
MAX_CHUNK_BYTES = 64 * 1024
NOTE_EVERY_S = 2.0


class DemoAgent(AgentExecutor):
    def __init__(self) -> None:
        self.card = demo_card()

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        text = context.text.strip()
        word, _, rest = text.partition(" ")
        if context.task is not None and context.task.status.state == states.INPUT_REQUIRED:
            await events.working()
            await events.artifact(f"answer: {text}", name="answer")
            await events.complete()
        elif word == "reply":
            await events.reply(rest)
        elif text == "whoami":
            await events.reply(_who(context.call))
        elif word == "ask":
            await events.require_input("What is your answer?")
        elif word == "stream" and rest.replace(" ", "").isdigit() and len(rest.split()) <= 2:
            n, _, size = rest.strip().partition(" ")
            await self._stream(events, min(int(n), MAX_STREAM_CHUNKS),
                               min(int(size or 0), MAX_CHUNK_BYTES))
        elif word == "file" and rest.strip():
            await self._file(events, rest.strip())
        elif word == "slow" and (not rest.strip() or _is_number(rest)):
            await self._slow(events, float(rest) if rest.strip() else 30.0, text)
        else:
            await events.working()
            await events.artifact(f"echo: {text}", name="echo")
            await events.complete()

    async def extended_card(self, call: CallContext) -> AgentCard:
        card = demo_card()
        card.description += f" This extended card was made for {_who(call)}."
        card.skills.add(id="whoami", name="Who am I", tags=["demo", "security"],
                        description="`whoami`: who the server says you are.",
                        examples=["whoami"])
        return card

    async def _stream(self, events: TaskEvents, n: int, size: int = 0) -> None:
        await events.working()
        artifact_id = None
        for i in range(1, n + 1):
            artifact_id = await events.artifact(
                f"chunk {i}/{n}".ljust(size, "."), artifact_id=artifact_id, name="chunks",
                append=i > 1, last_chunk=i == n,
            )
        await events.complete()

    async def _file(self, events: TaskEvents, name: str) -> None:
        await events.working()
        body = "".join(f"line {i}: made by the a2a-grpc demo agent\n" for i in range(1, 11))
        await events.artifact(Part(raw=body.encode(), filename=name, media_type="text/plain"),
                              name=name)
        data = Value()
        data.struct_value.update({"file": name, "bytes": len(body), "lines": 10})
        await events.artifact(Part(data=data), name="about")
        await events.complete()

    async def _slow(self, events: TaskEvents, seconds: float, text: str) -> None:
        await events.working(f"working for {seconds:g} s")
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while (left := end - loop.time()) > 0:
            await asyncio.sleep(min(NOTE_EVERY_S, left))
            await events.working(f"{max(end - loop.time(), 0):.0f} s left")
        await events.artifact(f"echo: {text}", name="echo")
        await events.complete()


def _who(call: CallContext) -> str:
    who = call.identity
    if who is None:
        return "anonymous"
    scopes = f" with scopes {', '.join(sorted(who.scopes))}" if who.scopes else ""
    return f"{who.subject} (by {who.scheme}{scopes})"


def _is_number(value: str) -> bool:
    try:
        return float(value) >= 0
    except ValueError:
        return False


def demo_card() -> AgentCard:
    """The demo agent's own description; the server adds interfaces."""
    return AgentCard(
        name="a2a-grpc demo agent",
        description="Echoes text, streams chunks, waits, asks for input, replies directly.",
        version=VERSION,  # the demo agent is as new as the server it ships in
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id="echo", name="Echo", description="Answers `echo: T` to any text T.",
                       tags=["demo"], examples=["hello"]),
            AgentSkill(id="stream", name="Stream", description="`stream N`: N artifact chunks.",
                       tags=["demo", "streaming"], examples=["stream 5"]),
            AgentSkill(id="slow", name="Slow", description="`slow S`: works S seconds; cancelable.",
                       tags=["demo"], examples=["slow 10"]),
            AgentSkill(id="ask", name="Ask", description="`ask`: asks for input, then answers.",
                       tags=["demo", "multi-turn"], examples=["ask"]),
            AgentSkill(id="reply", name="Reply", description="`reply T`: a direct message.",
                       tags=["demo"], examples=["reply hi"]),
            AgentSkill(id="file", name="File", description="`file NAME`: a file artifact.",
                       tags=["demo", "files"], examples=["file notes.txt"]),
        ],
    )
