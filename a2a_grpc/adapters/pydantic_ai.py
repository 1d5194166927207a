"""Serve a Pydantic AI agent as an A2A agent: `PydanticAIAgent(agent)`.

    from a2a_grpc.adapters.pydantic_ai import PydanticAIAgent
    served = PydanticAIAgent(agent)      # or: a2a-grpc serve --agent mymodule:agent

- The conversation of a `contextId` is the agent's message history, kept in
  the server's store (`TaskSource.context_state`), so a restart on the
  SQLite default or PostgreSQL keeps it.
- Streamed text becomes chunks of one artifact per text part, the last one
  marked `lastChunk`; a structured output (a model, a dict, a list) an
  artifact with a data part.
- Each tool call and its result are WORKING status notes.
- A tool that needs approval (`requires_approval=True`) or whose result
  comes from outside (`CallDeferred`) pauses the task as INPUT_REQUIRED,
  asking for it. The next message of that task answers: for an approval,
  "yes" (or y, ok, approve) approves every call waiting, anything else
  denies them with that text; for a deferred call, the text is its result.
  A message on the same contextId that starts a new task is a new prompt:
  it runs on the conversation without the paused turn, which goes on,
  answered by its own task, and joins the conversation when it ends.
- CancelTask stops the run; an exception fails the task with its message.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from a2a_grpc.adapters.common import Chunks, adapter_card, text_of
from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.core.extras import missing
from a2a_grpc.generated.a2a_pb2 import AgentCard, Part

try:
    from pydantic import TypeAdapter
    from pydantic_ai import (
        AgentRunResultEvent,
        DeferredToolRequests,
        DeferredToolResults,
        FunctionToolCallEvent,
        FunctionToolResultEvent,
        ModelMessagesTypeAdapter,
        PartDeltaEvent,
        PartEndEvent,
        PartStartEvent,
        TextPart,
        TextPartDelta,
        ToolDenied,
    )
except ImportError as exc:  # pragma: no cover - the extra names what to install
    raise missing(exc, "serving a Pydantic AI agent", "pydantic-ai") from exc

log = logging.getLogger("a2a_grpc.adapters.pydantic_ai")
STATE = "pydantic-ai"  # the name the conversation is kept under
YES = {"yes", "y", "ok", "approve", "approved"}
ANY_TASK = "*"  # a paused turn kept by a release that did not say whose task it was


@dataclass
class _Paused:
    """A task's turn waiting on tool calls: its run's messages (the conversation
    it started from, `base` of them, then its own), and the calls it waits on."""

    messages: list[Any]
    base: int
    approvals: list[str] = field(default_factory=list)  # tool call ids to approve or deny
    calls: list[str] = field(default_factory=list)  # tool call ids whose results come from us


@dataclass
class _Conversation:
    """What is kept of a contextId: the turns that ended, and the paused ones by task."""

    messages: list[Any] = field(default_factory=list)
    paused: dict[str, _Paused] = field(default_factory=dict)

    def dump(self) -> bytes:
        def listed(messages: list[Any]) -> Any:
            return json.loads(ModelMessagesTypeAdapter.dump_json(messages))

        return json.dumps({"messages": listed(self.messages), "paused": {
            task: {"messages": listed(p.messages), "base": p.base, "approvals": p.approvals,
                   "calls": p.calls} for task, p in self.paused.items()}}).encode()

    @classmethod
    def load(cls, raw: bytes | None) -> _Conversation:
        if not raw:
            return cls()
        data = json.loads(raw)
        messages = ModelMessagesTypeAdapter.validate_python(data["messages"])
        paused = {task: _Paused(ModelMessagesTypeAdapter.validate_python(p["messages"]),
                                p["base"], p["approvals"], p["calls"])
                  for task, p in data.get("paused", {}).items()}
        if data.get("approvals") or data.get("calls"):  # kept by a release before: no task
            paused[ANY_TASK] = _Paused(messages, _last_prompt(messages), data["approvals"],
                                       data["calls"])
            messages = messages[:paused[ANY_TASK].base]
        return cls(messages, paused)

    def paused_for(self, context: RequestContext) -> tuple[str, _Paused | None]:
        """The turn this message answers, under its key: its task's, if paused."""
        if context.task_id in self.paused:
            return context.task_id, self.paused[context.task_id]
        if context.task is not None:  # a follow-up: perhaps kept before tasks were
            return ANY_TASK, self.paused.get(ANY_TASK)
        return context.task_id, None

    def ended(self, run: list[Any], base: int) -> None:
        """A turn that started from `base` messages ended with `run`'s: its own
        follow the conversation as it is now (other tasks may have gone on)."""
        self.messages = [*self.messages, *run[base:]]


def _last_prompt(messages: list[Any]) -> int:
    """Where the last turn began: the request holding its user prompt."""
    for i in range(len(messages) - 1, -1, -1):
        if any(p.part_kind == "user-prompt" for p in messages[i].parts):
            return i
    return 0


class PydanticAIAgent(AgentExecutor):
    """A `pydantic_ai.Agent` as an agent."""

    keeps_conversations = True  # in the server's store: `serve` warns when that is memory

    def __init__(self, agent: Any, *, name: str | None = None, description: str | None = None,
                 card: AgentCard | None = None, deps: Any = None) -> None:
        self.agent, self.deps = agent, deps
        self.card = card or adapter_card(
            name or agent.name or "Pydantic AI agent",
            description or _text(agent.description) or "A Pydantic AI agent served over A2A.",
            _tools(agent))

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        assert self.tasks is not None, "bound by the server that runs it"
        talk = _Conversation.load(await self.tasks.context_state(events, STATE))
        text = text_of(context.message)
        key, paused = talk.paused_for(context)
        history = talk.messages if paused is None else paused.messages
        base = len(talk.messages) if paused is None else paused.base
        run = dict(message_history=history or None, deps=self.deps,
                   output_type=[self.agent.output_type, DeferredToolRequests])
        if paused is not None:
            run["deferred_tool_results"] = _answers(paused, text)
        else:
            run["user_prompt"] = text
        await events.working()
        try:
            result = await self._stream(events, run)
        except Exception as exc:
            log.exception("the agent failed on task %s", events.task_id)
            await events.fail(f"{type(exc).__name__}: {exc}")
            return
        output = result.output
        messages = list(result.all_messages())
        # Read again: other tasks of the conversation may have ended meanwhile.
        talk = _Conversation.load(await self.tasks.context_state(events, STATE))
        talk.paused.pop(key, None)
        if isinstance(output, DeferredToolRequests):
            talk.paused[events.task_id] = _Paused(
                messages, base, [c.tool_call_id for c in output.approvals],
                [c.tool_call_id for c in output.calls])
        else:
            talk.ended(messages, base)
        await self.tasks.save_context_state(events, STATE, talk.dump())
        if isinstance(output, DeferredToolRequests):
            await events.require_input(_question(output))
        else:
            if not isinstance(output, str):
                await events.artifact(_data_part(output), name="output")
            await events.complete()

    async def _stream(self, events: TaskEvents, run: dict[str, Any]) -> Any:
        chunks, parts = Chunks(events), 0
        async with self.agent.run_stream_events(**run) as stream:
            async for event in stream:
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    parts += 1  # a text part is an artifact of its own
                    await chunks.start(f"{events.task_id}-text-{parts}")
                    await chunks.add(event.part.content)
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta,
                                                                      TextPartDelta):
                    await chunks.add(event.delta.content_delta)
                elif isinstance(event, PartEndEvent) and isinstance(event.part, TextPart):
                    await chunks.end()
                elif isinstance(event, FunctionToolCallEvent):
                    await events.working(f"calling {event.part.tool_name}")
                elif isinstance(event, FunctionToolResultEvent):
                    await events.working(f"{event.part.tool_name} returned")
                elif isinstance(event, AgentRunResultEvent):
                    return event.result
        raise RuntimeError("the agent's run ended without a result")


def _answers(talk: _Paused, text: str) -> Any:
    approved = text.strip().lower().rstrip(".!") in YES
    return DeferredToolResults(
        approvals={i: True if approved else ToolDenied(text) for i in talk.approvals},
        calls={i: text for i in talk.calls})


def _question(requests: Any) -> list[Part]:
    asked = [f"Approve {c.tool_name}({c.args_as_json_str()})? Answer yes or no."
             for c in requests.approvals]
    asked += [f"The result of {c.tool_name}({c.args_as_json_str()})?" for c in requests.calls]
    waiting = [{"toolCallId": c.tool_call_id, "tool": c.tool_name, "args": c.args_as_dict(),
                "kind": kind} for kind, group in (("approval", requests.approvals),
                                                   ("result", requests.calls)) for c in group]
    return [Part(text="\n".join(asked)), _data_part({"waiting": waiting})]


def _data_part(value: Any) -> Part:
    from google.protobuf import json_format

    part = Part()
    json_format.ParseDict({"data": TypeAdapter(Any).dump_python(value, mode="json")}, part)
    return part


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _tools(agent: Any) -> list[tuple[str, str]]:
    """The agent's own function tools (name, description), for the card's skills."""
    found: list[tuple[str, str]] = []
    for toolset in getattr(agent, "toolsets", ()) or ():
        for name, tool in (getattr(toolset, "tools", None) or {}).items():
            found.append((name, getattr(tool, "description", "") or ""))
    return found
