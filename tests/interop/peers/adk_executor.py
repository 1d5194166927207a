"""Google ADK's own A2A executor (what `to_a2a` serves), on a scripted model:
no model is called. `a2a-grpc serve --agent adk_executor:executor`;
`python adk_executor.py PORT`: the same agent on ADK's own server."""

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.a2a.executor.a2a_agent_executor import A2aAgentExecutor
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types


class Scripted(BaseLlm):
    model: str = "scripted"

    async def generate_content_async(self, llm_request: Any, stream: bool = False,
                                     ) -> AsyncGenerator[LlmResponse, None]:
        contents = llm_request.contents
        turns = sum(1 for c in contents if c.role == "user" and any(p.text for p in c.parts))
        text = f"adk heard {contents[-1].parts[-1].text} ({turns} turns)"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]),
                          partial=False, turn_complete=True)


root_agent = LlmAgent(name="scripted_agent", model=Scripted(), description="Echoes, scripted",
                      instruction="Answer.")


def executor():
    return A2aAgentExecutor(runner=InMemoryRunner(agent=root_agent, app_name="scripted"))


if __name__ == "__main__":  # ADK's own server for the same agent: `to_a2a` under uvicorn
    import sys

    import uvicorn
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    port = int(sys.argv[1])
    uvicorn.run(to_a2a(root_agent, host="127.0.0.1", port=port), host="127.0.0.1", port=port)
