"""Pydantic AI agents for the adapter's tests, on Pydantic AI's own
FunctionModel (a model that is a Python function, streamed word by word): no
model is called. `agent` is what `serve --agent` is given in the restart test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel
from pydantic_ai import Agent, CallDeferred, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel


def _last(messages: list[ModelMessage]) -> Any:
    return messages[-1].parts[-1]


def _prompts(messages: list[ModelMessage]) -> int:
    return sum(1 for m in messages for p in m.parts if p.part_kind == "user-prompt")


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = _last(messages)
    if last.part_kind == "user-prompt":
        said = str(last.content)
        for tool in ("delete_file", "lookup", "broken"):
            if said.startswith(tool):
                return ModelResponse(parts=[ToolCallPart(tool, {"name": said.split()[-1]})])
        return ModelResponse(parts=[TextPart(f"you said {said} ({_prompts(messages)} prompts)")])
    if last.part_kind == "tool-return":
        return ModelResponse(parts=[TextPart(f"{last.tool_name}: {last.content}")])
    return ModelResponse(parts=[TextPart(f"{last.part_kind}: {getattr(last, 'content', '')}")])


async def stream(messages: list[ModelMessage], info: AgentInfo,
                 ) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    for part in respond(messages, info).parts:
        if isinstance(part, TextPart):
            words = part.content.split(" ")
            for i, word in enumerate(words):
                yield word + (" " if i < len(words) - 1 else "")
        else:
            assert isinstance(part, ToolCallPart)
            yield {0: DeltaToolCall(name=part.tool_name, json_args=part.args_as_json_str(),
                                    tool_call_id=part.tool_call_id)}


__all__ = ["DeferredToolRequests", "agent", "structured"]
MODEL = FunctionModel(respond, stream_function=stream)
agent: Agent[None, str] = Agent(MODEL, name="helper", description="Helps with files.")


@agent.tool_plain(requires_approval=True)
def delete_file(name: str) -> str:
    """Delete a file (asks first)."""
    return f"deleted {name}"


@agent.tool_plain
def lookup(name: str) -> str:
    """Look a name up elsewhere (the answer comes from outside)."""
    raise CallDeferred


@agent.tool_plain
def broken(name: str) -> str:
    """Always fails."""
    raise RuntimeError(f"the {name} service is down")


class Weather(BaseModel):
    city: str
    degrees: int


def weather(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    tool = info.output_tools[0].name
    return ModelResponse(parts=[ToolCallPart(tool, {"city": "Oslo", "degrees": 4})])


async def stream_weather(messages: list[ModelMessage], info: AgentInfo,
                         ) -> AsyncIterator[dict[int, DeltaToolCall]]:
    [part] = weather(messages, info).parts
    assert isinstance(part, ToolCallPart)
    yield {0: DeltaToolCall(name=part.tool_name, json_args=part.args_as_json_str())}


structured: Agent[None, Weather] = Agent(
    FunctionModel(weather, stream_function=stream_weather), output_type=Weather,
    name="weather")
