"""AG2's own A2A server (`ag2.a2a.A2AServer`, a2a-sdk 1.x) around an AG2
agent on a scripted model: no model is called. `a2a-grpc serve --agent
ag2_agent:server` serves it; `python ag2_agent.py PORT` serves it on AG2's
own JSON-RPC app, as AG2's docs have users do."""

import sys
from typing import Any

from ag2 import Agent
from ag2.a2a import A2AServer
from ag2.config import LLMClient, ModelConfig
from ag2.events import ModelMessage, ModelResponse
from ag2.events.input_events import ModelRequest


class Scripted(LLMClient):
    """Answers with what the user said last."""

    async def __call__(self, messages: Any, context: Any, **kwargs: Any) -> ModelResponse:
        asked = [m for m in messages if isinstance(m, ModelRequest)]
        said = " ".join(getattr(p, "content", "") for p in asked[-1].parts) if asked else ""
        message = ModelMessage(f"ag2 heard {said}")
        await context.send(message)
        return ModelResponse(message)


class ScriptedConfig(ModelConfig):
    @property
    def provider(self) -> Any:
        raise NotImplementedError

    @property
    def model(self) -> str:
        return "scripted"

    def copy(self) -> "ScriptedConfig":
        return self

    def create(self) -> Scripted:
        return Scripted()

    def create_files_client(self) -> Any:
        raise NotImplementedError


agent = Agent("echo", "Repeat what you hear.", config=ScriptedConfig())
server = A2AServer(agent)


if __name__ == "__main__":
    import uvicorn

    port = int(sys.argv[1])
    print(f"listening: HTTP on 127.0.0.1:{port}", flush=True)
    uvicorn.run(server.build_jsonrpc(url=f"http://127.0.0.1:{port}/"), host="127.0.0.1",
                port=port, log_level="warning")
