"""A Pydantic AI agent served over A2A, as it is:

    pip install 'a2a-grpc[pydantic-ai]'
    a2a-grpc serve --agent pydantic_ai_agent:agent

An ordinary Pydantic AI agent with a tool that needs approval. The model is
Pydantic AI's FunctionModel, so the example runs offline; put your own
model ("openai:gpt-5", ...) in its place.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1].parts[-1]
    if last.part_kind == "user-prompt" and str(last.content).startswith("refund"):
        return ModelResponse(parts=[ToolCallPart("refund", {"order": str(last.content)[7:]})])
    if last.part_kind == "tool-return":
        return ModelResponse(parts=[TextPart(f"Done: {last.content}")])
    if last.part_kind == "user-prompt":
        return ModelResponse(parts=[TextPart(f"How can I help with {last.content}?")])
    return ModelResponse(parts=[TextPart("Not refunded.")])


async def streamed(messages: list[ModelMessage], info: AgentInfo,
                   ) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    for part in model(messages, info).parts:
        if isinstance(part, TextPart):
            yield part.content
        else:
            assert isinstance(part, ToolCallPart)
            yield {0: DeltaToolCall(name=part.tool_name, json_args=part.args_as_json_str())}


agent: Agent[None, str] = Agent(FunctionModel(model, stream_function=streamed),
                                name="support", description="Answers orders and refunds.")


@agent.tool_plain(requires_approval=True)
def refund(order: str) -> str:
    """Refund an order (a person approves it first)."""
    return f"order {order} refunded"
