"""What the framework adapters share: the card built from a framework agent's
own name, description and tools, a message's text, and streamed text as
artifact chunks."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from google.protobuf import json_format

from a2a_grpc.agent import TaskEvents
from a2a_grpc.generated.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill, Message

MODES = ["text/plain", "application/json"]


def adapter_card(name: str, description: str,
                 tools: Sequence[tuple[str, str]] = ()) -> AgentCard:
    """A card for a framework agent: its name and description, one skill for
    the agent itself and one per tool (name, description), text and JSON in
    and out (a data part goes to the framework as JSON text, or as what it
    answers), streaming. The server fills in the interfaces."""
    skills = [AgentSkill(id=_skill_id(name), name=name, description=description,
                         tags=["agent"])]
    skills += [AgentSkill(id=_skill_id(tool), name=tool, description=about or tool,
                          tags=["tool"]) for tool, about in tools]
    return AgentCard(name=name, description=description, version="1.0.0",
                     capabilities=AgentCapabilities(streaming=True),
                     default_input_modes=MODES, default_output_modes=MODES,
                     skills=skills)


def _skill_id(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"


def text_of(message: Message) -> str:
    """The message as the text a framework takes: its text parts, then each
    data part as JSON; files are named, not inlined."""
    pieces: list[str] = []
    for part in message.parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            pieces.append(part.text)
        elif kind == "data":
            pieces.append(json.dumps(json_format.MessageToDict(part.data)))
        elif kind in ("raw", "url"):
            pieces.append(f"[file {part.filename or part.url or 'attached'}"
                          f" ({part.media_type or 'application/octet-stream'})]")
    return "\n".join(pieces)


class Chunks:
    """Text a framework streams, as chunks of one artifact: a chunk is sent
    when the next one comes (or the artifact ends), so the last can say it is
    the last (`lastChunk`). `start` begins the next artifact."""

    def __init__(self, events: TaskEvents, name: str = "answer") -> None:
        self._events, self._name = events, name
        self._id = ""
        self._held: str | None = None
        self._sent = 0  # chunks of the current artifact sent so far

    @property
    def open(self) -> bool:
        """Has the current artifact had text?"""
        return self._sent > 0 or self._held is not None

    async def start(self, artifact_id: str) -> None:
        await self.end()
        self._id = artifact_id

    async def add(self, text: str) -> None:
        if not text:
            return
        if self._held is not None:
            await self._send(self._held, last=False)
        self._held = text

    async def end(self) -> None:
        if self._held is not None:
            await self._send(self._held, last=True)
        self._held, self._sent = None, 0

    async def _send(self, text: str, *, last: bool) -> None:
        await self._events.artifact(text, artifact_id=self._id, name=self._name,
                                    append=self._sent > 0, last_chunk=last)
        self._sent += 1
