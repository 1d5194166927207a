"""Serve a Google ADK agent as an A2A agent: `AdkAgent(agent)` or `AdkAgent(runner)`.

    from a2a_grpc.adapters.adk import AdkAgent
    served = AdkAgent(root_agent)        # or: a2a-grpc serve --agent mymodule:root_agent

It follows ADK's own A2A executor (google.adk.a2a) where ADK documents a
convention, and says where it differs:

- A session per `contextId` (session id = contextId), run as the caller's
  user name when the server authenticated one, else `A2A_USER_<contextId>`,
  as ADK does. Sessions live in the runner's session service: pass a
  `Runner` with a durable one (SqliteSessionService, DatabaseSessionService)
  to keep conversations across restarts; with ADK's in-memory one the
  adapter says at start that they are lost on restart.
- Streamed text (partial events; the runner streams with SSE) becomes chunks
  of one artifact per model turn, the last marked `lastChunk`; a turn that
  was not streamed is one artifact.
- Tool calls and their results are WORKING status notes.
- A long-running tool call pauses the task as INPUT_REQUIRED. As ADK's
  executor does, the status message carries the call as a data part
  (`{"name", "args", "id"}`, metadata `adk_type: function_call`,
  `adk_is_long_running: true`), and a data part with `adk_type:
  function_response` (`{"id", "name", "response"}`) answers it. Unlike ADK,
  a plain text answer is taken too, as the response `{"result": TEXT}` of
  every call waiting; ADK refuses it with "It was not provided a function
  response for the function call".
- CancelTask stops the run; an error event or an exception fails the task
  with its message.
"""

from __future__ import annotations

import logging
from typing import Any

from google.protobuf import json_format

from a2a_grpc.adapters.common import Chunks, adapter_card, text_of
from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.core.extras import missing
from a2a_grpc.generated.a2a_pb2 import AgentCard, Message, Part

try:
    from google.adk.agents import RunConfig

    # Where ADK's documentation imports it from (it is defined in a private module).
    from google.adk.agents.run_config import StreamingMode  # type: ignore[attr-defined]
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types
except ImportError as exc:  # pragma: no cover - the extra names what to install
    raise missing(exc, "serving a Google ADK agent", "adk") from exc

log = logging.getLogger("a2a_grpc.adapters.adk")
TYPE, LONG_RUNNING = "adk_type", "adk_is_long_running"  # ADK's A2A part metadata keys


class AdkAgent(AgentExecutor):
    """An ADK agent (a BaseAgent, or a Runner holding one) as an agent."""

    def __init__(self, agent_or_runner: Any, *, card: AgentCard | None = None,
                 app_name: str | None = None) -> None:
        if isinstance(agent_or_runner, Runner):
            self.runner = agent_or_runner
        else:
            self.runner = Runner(app_name=app_name or agent_or_runner.name,
                                 agent=agent_or_runner,
                                 session_service=InMemorySessionService())
        agent = self.runner.agent
        self.card = card or adapter_card(agent.name, agent.description or
                                         "A Google ADK agent served over A2A.", _tools(agent))
        if isinstance(self.runner.session_service, InMemorySessionService):
            log.warning("the ADK agent's sessions are in memory: conversations and paused "
                        "tasks are lost when the server restarts; give AdkAgent a Runner with "
                        "a durable session service (SqliteSessionService) to keep them")

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        user = context.call.user or f"A2A_USER_{context.context_id}"
        service, app = self.runner.session_service, self.runner.app_name
        if await service.get_session(app_name=app, user_id=user,
                                     session_id=context.context_id) is None:
            await service.create_session(app_name=app, user_id=user,
                                         session_id=context.context_id)
        await events.working()
        turns, waiting = _Turns(events), []
        try:
            async for event in self.runner.run_async(
                    user_id=user, session_id=context.context_id,
                    new_message=_content_of(context),
                    run_config=RunConfig(streaming_mode=StreamingMode.SSE)):
                if event.error_message:
                    raise RuntimeError(f"{event.error_code or 'error'}: {event.error_message}")
                waiting += await turns.add(event)
            await turns.close()
        except Exception as exc:
            log.exception("the ADK agent failed on task %s", events.task_id)
            await events.fail(f"{type(exc).__name__}: {exc}")
            return
        if waiting:
            await events.require_input(_question(waiting))
        else:
            await events.complete()


class _Turns:
    """ADK events as artifacts and notes; long-running calls are handed back."""

    def __init__(self, events: TaskEvents) -> None:
        self._events = events
        self._chunks = Chunks(events)
        self._turn = 0

    async def add(self, event: Any) -> list[Any]:
        long_running = set(event.long_running_tool_ids or ())
        waiting = []
        for part in (event.content.parts if event.content else None) or []:
            if part.text and not part.thought:
                await (self._chunk(part.text) if event.partial else self._whole(part.text))
            elif part.function_call:
                call = part.function_call
                if call.id in long_running:
                    waiting.append(call)
                await self._events.working(f"calling {call.name}")
            elif part.function_response:
                await self._events.working(f"{part.function_response.name} returned")
        return waiting

    async def _chunk(self, text: str) -> None:
        if not self._chunks.open:  # a new model turn: an artifact of its own
            await self._chunks.start(self._next_id())
        await self._chunks.add(text)

    async def _whole(self, text: str) -> None:
        if self._chunks.open:
            await self.close()  # the turn was streamed: its whole text is what was sent
        else:
            await self._events.artifact(text, artifact_id=self._next_id(), name="answer")

    async def close(self) -> None:
        await self._chunks.end()

    def _next_id(self) -> str:
        self._turn += 1
        return f"{self._events.task_id}-turn-{self._turn}"


def _content_of(context: RequestContext) -> Any:
    """The user's message as ADK content: a function response when it answers
    the long-running calls the task waits on, else its text."""
    answered = [_response(part) for part in context.message.parts
                if _metadata(part).get(TYPE) == "function_response"]
    waiting = _waiting_calls(context.task.status.message) if context.task else []
    if not answered and waiting:
        text = text_of(context.message)
        answered = [types.FunctionResponse(id=c["id"], name=c["name"],
                                           response={"result": text}) for c in waiting]
    if answered:
        return types.Content(role="user",
                             parts=[types.Part(function_response=r) for r in answered])
    return types.Content(role="user", parts=[types.Part(text=text_of(context.message))])


def _metadata(part: Part) -> dict[str, Any]:
    return json_format.MessageToDict(part.metadata) if part.HasField("metadata") else {}


def _data(part: Part) -> dict[str, Any]:
    value = json_format.MessageToDict(part.data)
    return value if isinstance(value, dict) else {}


def _response(part: Part) -> Any:
    data = _data(part)
    return types.FunctionResponse(id=data.get("id"), name=data.get("name"),
                                  response=data.get("response") or {})


def _waiting_calls(asked: Message) -> list[dict[str, Any]]:
    return [_data(p) for p in asked.parts
            if _metadata(p).get(TYPE) == "function_call" and _metadata(p).get(LONG_RUNNING)]


def _question(calls: list[Any]) -> list[Part]:
    parts = [Part(text="\n".join(f"Waiting for {c.name}({c.args or {}}): answer with its result."
                                 for c in calls))]
    for call in calls:
        part = Part()
        json_format.ParseDict({"data": {"name": call.name, "args": dict(call.args or {}),
                                        "id": call.id},
                               "metadata": {TYPE: "function_call", LONG_RUNNING: True}}, part)
        parts.append(part)
    return parts


def _tools(agent: Any) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for tool in getattr(agent, "tools", None) or []:
        name = getattr(tool, "name", None) or getattr(tool, "__name__", "")
        about = getattr(tool, "description", None) or (getattr(tool, "__doc__", "") or "")
        if name:
            found.append((name, about.strip().splitlines()[0] if about.strip() else ""))
    return found
