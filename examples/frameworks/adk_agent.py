"""A Google ADK agent served over A2A, as it is:

    pip install 'a2a-grpc[adk]'
    a2a-grpc serve --agent adk_agent:root_agent

An ordinary ADK LlmAgent with a long-running tool. The model is a small
BaseLlm that scripts its replies, so the example runs offline; put your own
("gemini-2.5-flash", ...) in its place.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.genai import types


class Scripted(BaseLlm):
    model: str = "scripted"

    async def generate_content_async(self, llm_request: Any, stream: bool = False,
                                     ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1].parts[-1]
        if last.function_response:
            text = f"The manager said: {last.function_response.response.get('result')}"
        elif last.text and last.text.startswith("expense"):
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(
                function_call=types.FunctionCall(name="ask_manager",
                                                 args={"expense": last.text[8:]}))]))
            return
        else:
            text = f"I file expenses. You said: {last.text}"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def ask_manager(expense: str) -> dict[str, str]:
    """Ask the manager to approve an expense; the answer comes later."""
    return {"status": "waiting for the manager"}


root_agent = LlmAgent(name="expenses", model=Scripted(), description="Files expenses.",
                      instruction="File expenses.", tools=[LongRunningFunctionTool(ask_manager)])
