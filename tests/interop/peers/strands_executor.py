"""Strands' own A2A executor (StrandsA2AExecutor, a2a-sdk 0.3), on a scripted
model: no model is called. `a2a-grpc serve --agent strands_executor:executor`;
`python strands_executor.py PORT`: the same agent on Strands' own server."""

from typing import Any

from strands import Agent
from strands.models.model import Model
from strands.multiagent.a2a.executor import StrandsA2AExecutor


class Scripted(Model):
    """Answers with what the user said last and how many turns there were."""

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield  # an async generator, as the interface has it

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                     **kwargs: Any) -> Any:
        users = [m for m in messages if m["role"] == "user"]
        said = " ".join(c.get("text", "") for c in users[-1]["content"])
        text = f"strands heard {said} ({len(users)} turns)"
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        for word in text.split(" "):
            yield {"contentBlockDelta": {"delta": {"text": word + " "}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def executor() -> StrandsA2AExecutor:
    return StrandsA2AExecutor(
        agent_factory=lambda context_id: Agent(model=Scripted(), callback_handler=None,
                                               name="scripted", description="Echoes, scripted"),
        enable_a2a_compliant_streaming=True)


def a2a_server() -> Any:
    """Strands' own server, as its docs write it (`A2AServer(agent=...)`): its
    executor and card are what `serve --agent strands_executor:a2a_server` serves."""
    from strands.multiagent.a2a import A2AServer

    return A2AServer(agent=Agent(model=Scripted(), callback_handler=None, name="scripted",
                                 description="Echoes, scripted"),
                     enable_a2a_compliant_streaming=True)


if __name__ == "__main__":  # Strands' own server for the same agent, as its docs serve it
    import sys

    a2a_server().serve(host="127.0.0.1", port=int(sys.argv[1]))
