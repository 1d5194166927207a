"""Google ADK agents for the adapter's tests, on a model class that scripts
its replies (a BaseLlm that streams them word by word when asked): no model
is called. `durable` is what `serve --agent` is given in the restart test: a
Runner whose sessions are in ADK's SQLite session service (ADK_SESSIONS)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.genai import types


def _reply(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


class Scripted(BaseLlm):
    """Answers from the conversation: `ask_manager ...` calls the long-running
    tool, `lookup ...` a plain one, `wait` never answers, `fail` is an error;
    anything else is echoed with the number of user turns so far."""

    model: str = "scripted"

    async def generate_content_async(self, llm_request: Any, stream: bool = False,
                                     ) -> AsyncGenerator[LlmResponse, None]:
        contents = llm_request.contents
        last = contents[-1].parts[-1]
        turns = sum(1 for c in contents if c.role == "user" and any(p.text for p in c.parts))
        if last.function_response:
            text = f"{last.function_response.name} said {last.function_response.response}"
        elif last.text and last.text.split()[0] in ("ask_manager", "lookup"):
            name, *rest = last.text.split()
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(
                function_call=types.FunctionCall(name=name, args={"what": " ".join(rest)}))]))
            return
        elif last.text == "wait":
            await asyncio.Event().wait()  # never set: waits until cancelled
            return
        elif last.text == "fail":
            yield LlmResponse(error_code="QUOTA", error_message="the model is out of quota")
            return
        else:
            text = f"you said {last.text} ({turns} turns)"
        if stream:
            words = text.split(" ")
            for i, word in enumerate(words):
                yield LlmResponse(content=_reply(word + (" " if i < len(words) - 1 else "")),
                                  partial=True)
        yield LlmResponse(content=_reply(text), partial=False, turn_complete=True)


def ask_manager(what: str) -> dict[str, str]:
    """Ask the manager; the answer comes later."""
    return {"status": "asked"}


def lookup(what: str) -> dict[str, str]:
    """Look something up."""
    return {"found": what.upper()}


def make_agent() -> LlmAgent:
    return LlmAgent(name="helper", model=Scripted(), description="Helps with approvals.",
                    instruction="Help.", tools=[LongRunningFunctionTool(ask_manager), lookup])


root_agent = make_agent()


def durable() -> Any:
    from google.adk.runners import Runner
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    return Runner(app_name="helper", agent=make_agent(),
                  session_service=SqliteSessionService(os.environ["ADK_SESSIONS"]))
