"""Microsoft Agent Framework's own A2A executor (`agent_framework_a2a.A2AExecutor`,
a2a-sdk 1.x) around an agent on a scripted chat client: no model is called.
`a2a-grpc serve --agent maf_executor:executor`, or the SDK's own server
(sdk_server.py, A2A_SDK_EXECUTOR=maf_executor:executor)."""

from typing import Any

from agent_framework import BaseChatClient, ChatResponse, Message
from agent_framework_a2a import A2AExecutor


class Scripted(BaseChatClient):
    """Answers with what the user said last."""

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any,
                                  **kwargs: Any) -> Any:
        users = [m for m in messages if m.role == "user"]
        said = users[-1].text if users else ""
        return ChatResponse(messages=[Message(role="assistant", contents=[f"maf heard {said}"])],
                            response_id="scripted")


def executor() -> A2AExecutor:
    return A2AExecutor(Scripted().as_agent(name="scripted", instructions="Repeat it."))
