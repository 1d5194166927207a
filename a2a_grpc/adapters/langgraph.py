"""Serve a compiled LangGraph graph as an A2A agent: `LangGraphAgent(graph)`.

    from a2a_grpc.adapters.langgraph import LangGraphAgent
    agent = LangGraphAgent(graph)        # or: a2a-grpc serve --agent mymodule:graph

- The A2A `contextId` is the graph's thread (`thread_id`): the graph's
  checkpointer keeps the conversation; a durable one (SqliteSaver,
  PostgresSaver) keeps it across restarts. With none, or an in-memory one,
  the adapter says so when it is made (at start).
- The message's text goes in as a `HumanMessage` on the graph's
  `messages` key (`input_key`).
- AI messages the graph produces become artifacts, one per message:
  streamed tokens (LangGraph's "messages" stream) are chunks of one
  artifact, the last one marked `lastChunk`; a message a node returns
  without a chat model (an `AIMessage`, `("ai", text)`, or
  `{"role": "assistant", ...}` under `input_key`) is an artifact whole.
  Tool results and the user's own messages are not answers and are left out.
- Each node that finishes is a WORKING status note naming it ("updates").
- `interrupt(value)` pauses the task as INPUT_REQUIRED with the value as the
  question (text as it is, anything else as a JSON data part); the next
  message of the task resumes the graph where it stopped
  (`Command(resume=text)`).
- CancelTask stops the run (the graph's astream is cancelled); an exception
  fails the task with its message.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.core.extras import missing
from a2a_grpc.generated.a2a_pb2 import AgentCard, Part

try:
    from langchain_core.messages import (
        AIMessage,
        AIMessageChunk,
        BaseMessage,
        HumanMessage,
        convert_to_messages,
    )
    from langgraph.types import Command
except ImportError as exc:  # pragma: no cover - the extra names what to install
    raise missing(exc, "serving a LangGraph graph", "langgraph") from exc

from a2a_grpc.adapters.common import Chunks, adapter_card, text_of

log = logging.getLogger("a2a_grpc.adapters.langgraph")
STREAM_MODES = ["messages", "updates"]
INTERRUPT = "__interrupt__"


class LangGraphAgent(AgentExecutor):
    """A compiled LangGraph graph (anything with `astream` and `aget_state`) as an agent."""

    def __init__(self, graph: Any, *, name: str | None = None, description: str | None = None,
                 card: AgentCard | None = None, input_key: str = "messages") -> None:
        self.graph, self.input_key = graph, input_key
        own = getattr(graph, "name", None)
        self.card = card or adapter_card(
            name or (own if own and own != "LangGraph" else "LangGraph agent"),
            description or "A LangGraph graph served over A2A.")
        _say_where_state_lives(graph)

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        config = {"configurable": {"thread_id": context.context_id}}
        text = text_of(context.message)
        pending = await self._interrupts(config)
        graph_input: Any = (Command(resume=_resume_value(pending, text)) if pending
                            else {self.input_key: [HumanMessage(content=text)]})
        await events.working()
        answers = _Answers(events)
        try:
            async for mode, chunk in self.graph.astream(graph_input, config,
                                                        stream_mode=STREAM_MODES):
                if mode == "messages":
                    await answers.add(chunk[0])
                elif isinstance(chunk, Mapping):
                    for node, update in chunk.items():
                        if node != INTERRUPT:
                            await answers.returned(update, self.input_key)
                            await events.working(f"{node} done")
            await answers.close()
            pending = await self._interrupts(config)
        except Exception as exc:
            log.exception("the graph failed on task %s", events.task_id)
            await events.fail(f"{type(exc).__name__}: {exc}")
            return
        if pending:
            await events.require_input(_question(pending[0].value))
        else:
            await events.complete()

    async def _interrupts(self, config: dict[str, Any]) -> list[Any]:
        if getattr(self.graph, "checkpointer", None) is None:
            return []  # no state kept: nothing can be waiting
        state = await self.graph.aget_state(config)
        return list(getattr(state, "interrupts", ()) or ())


class _Answers:
    """AI messages as artifacts: one per message id, its tokens as chunks."""

    def __init__(self, events: TaskEvents) -> None:
        self._chunks = Chunks(events)
        self._id: str | None = None
        self._streamed: set[str] = set()  # the ids of the messages sent so far

    async def add(self, message: BaseMessage, whole: bool = False) -> None:
        """A message's text, or the next tokens of the message being streamed;
        `whole`: a complete message, an artifact of its own."""
        if not isinstance(message, AIMessage | AIMessageChunk):
            return  # the user's and tools' messages are not answers
        text = message.text if isinstance(message.text, str) else str(message.content)
        if whole or message.id != self._id:
            self._id = message.id
            await self._chunks.start(message.id or str(uuid.uuid4()))
        if message.id:
            self._streamed.add(message.id)
        await self._chunks.add(text)

    async def returned(self, update: Any, key: str) -> None:
        """A node's update: the AI messages it returned under `key` that the
        "messages" stream did not carry (LangGraph streams the message objects
        a node returns, but not tuples or dicts, which its reducer converts)."""
        if not isinstance(update, Mapping) or key not in update:
            return
        value = update[key]
        try:
            messages = convert_to_messages(value if isinstance(value, list) else [value])
        except (ValueError, TypeError, NotImplementedError):
            return  # not messages: the graph's own shape, nothing to answer with
        for message in messages:
            if isinstance(message, AIMessage) and not (message.id and
                                                        message.id in self._streamed):
                await self.add(message, whole=True)

    async def close(self) -> None:
        await self._chunks.end()


def _resume_value(pending: list[Any], text: str) -> Any:
    """One interrupt takes the answer as it is; several, each the same answer."""
    if len(pending) == 1:
        return text
    return {p.id: text for p in pending}


def _question(value: Any) -> Part | str:
    if isinstance(value, str):
        return value
    part = Part()
    json_format.ParseDict({"data": value}, part)
    return part


def _say_where_state_lives(graph: Any) -> None:
    saver = getattr(graph, "checkpointer", None)
    if saver is None:
        log.warning("the LangGraph graph has no checkpointer: each message starts a new "
                    "conversation and interrupt() cannot pause a task; compile it with one "
                    "(a durable one, such as SqliteSaver, keeps conversations across restarts)")
    elif type(saver).__name__ in ("InMemorySaver", "MemorySaver"):
        log.warning("the LangGraph graph's checkpointer is in memory: conversations and "
                    "paused tasks are lost when the server restarts; use a durable one "
                    "(SqliteSaver, PostgresSaver) to keep them")
