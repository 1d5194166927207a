"""Framework servers that hold an a2a-sdk executor without the SDK's request
handler in them until they serve, each taken as its own serving would take
it: its executor, and the card it would publish (the interfaces are the
server's own). AG2's `ag2.a2a.A2AServer` (a2a-sdk 1.x): as `build_*()`;
BeeAI's `A2AServer` (a2a-sdk 0.3): as `serve()`, which makes the executor
of its one registered agent from the factory for the agent's type."""

from __future__ import annotations

from typing import Any

PLACEHOLDER_URL = "http://localhost/"  # the card's URL: replaced by the served interfaces


def executor_and_card(obj: Any) -> tuple[Any, Any] | None:
    """(the SDK executor, the card) of a framework server we know, else None."""
    module = type(obj).__module__
    if module.startswith("ag2.a2a") and hasattr(obj, "_executor"):
        return _ag2(obj)
    if module.startswith("beeai_framework.adapters.a2a") and hasattr(obj, "_members"):
        return _beeai(obj)
    return None


def _ag2(server: Any) -> tuple[Any, Any]:
    """A2AServer(agent): its executor, and the card `build_jsonrpc` makes for
    the agent (`ag2.a2a.card.build_card`)."""
    from ag2.a2a.card import build_card

    card = build_card(server.agent, url=PLACEHOLDER_URL, transports=("jsonrpc",))
    return server._executor, card


def _beeai(server: Any) -> tuple[Any, Any]:
    """A2AServer().register(agent): the executor `serve()` makes for the agent
    (with what `register` was given beside it), and that executor's card.
    The task store, queue manager and push sender given to `register` are
    the SDK server's parts: ours serve in their place."""
    if not server._members:
        raise ValueError("the BeeAI A2AServer has no agent registered: call "
                         "server.register(agent) before serving it")
    member = server._members[0]
    factory = type(server)._get_factory(member)
    metadata = server._metadata_by_agent.get(member, {})
    executor = factory(member, metadata=metadata, memory_manager=server._memory_manager)
    return executor, executor.agent_card
