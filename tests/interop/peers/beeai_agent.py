"""BeeAI's `A2AServer` as its docs have users write it, around a scripted
runnable (no model): it answers "beeai heard TEXT (N messages)", N counting
the conversation BeeAI's executor keeps per context. `python beeai_agent.py
PORT` serves it on BeeAI's own server (the SDK 0.3 JSON-RPC app under
uvicorn); `a2a-grpc serve --agent beeai_agent:server` serves the same object."""

from __future__ import annotations

import sys
from typing import Any

from beeai_framework.adapters.a2a.serve.server import A2AServer, A2AServerConfig
from beeai_framework.backend import AnyMessage, AssistantMessage
from beeai_framework.emitter import Emitter
from beeai_framework.runnable import Runnable, RunnableOutput, runnable_entry


class Scripted(Runnable[RunnableOutput]):
    """Echoes, scripted"""

    def __init__(self) -> None:
        super().__init__()
        self._emitter = Emitter.root().child(namespace=["scripted"], creator=self)

    @runnable_entry
    async def run(self, input: list[AnyMessage], /, **kwargs: Any) -> RunnableOutput:
        said = AssistantMessage(f"beeai heard {input[-1].text} ({len(input)} messages)")
        return RunnableOutput(output=[said])

    @property
    def emitter(self) -> Emitter:
        return self._emitter


port = int(sys.argv[1]) if __name__ == "__main__" else 9999
server = A2AServer(config=A2AServerConfig(host="127.0.0.1", port=port)).register(Scripted())

if __name__ == "__main__":
    server.serve()
