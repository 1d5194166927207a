"""Agents written for something else, served as A2A agents: executors of the
official A2A SDK (a2a-sdk 1.x or 0.3, and so every framework that serves
through it: ADK's A2aAgentExecutor, Strands, ...), LangGraph graphs
(`[langgraph]`), Pydantic AI agents (`[pydantic-ai]`) and Google ADK agents
(`[adk]`); and the framework servers holding an SDK executor (Strands'
and AG2's A2AServer: servers.py). `wrap` recognises such an object
(what `serve --agent` is given) without importing any framework; each adapter
imports its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from a2a_grpc.adapters.servers import executor_and_card
from a2a_grpc.agent import AgentExecutor

# (the framework, the module its classes come from, the adapter's module and class)
# The SDK first: a framework's executor (ADK's, Strands') is an SDK executor.
FRAMEWORKS = (
    ("the official A2A SDK", "a2a.server.", "a2a_grpc.adapters.sdk", "SdkAgent"),
    ("LangGraph", "langgraph.", "a2a_grpc.adapters.langgraph", "LangGraphAgent"),
    ("Pydantic AI", "pydantic_ai.", "a2a_grpc.adapters.pydantic_ai", "PydanticAIAgent"),
    ("Google ADK", "google.adk.", "a2a_grpc.adapters.adk", "AdkAgent"),
)


def framework_of(obj: Any) -> tuple[str, str, str] | None:
    """(framework, adapter module, adapter class) for a framework's agent, else None."""
    modules = [f"{c.__module__}." for c in type(obj).__mro__]
    for name, prefix, module, cls in FRAMEWORKS:
        if any(m.startswith(prefix) for m in modules):
            return name, module, cls
    return None


def sdk_handler(obj: Any) -> Any:
    """The official SDK's request handler that `obj` is or holds (a
    DefaultRequestHandler, or a server built on one: Strands' A2AServer, the
    SDK's A2AStarletteApplication), else None."""
    handler = getattr(obj, "handler", None)  # the SDK's apps: a JSON-RPC handler around it
    for each in (obj, getattr(obj, "request_handler", None), handler,
                 getattr(handler, "request_handler", None)):
        if (type(each).__module__.startswith("a2a.server.request_handlers")
                and hasattr(each, "agent_executor")):
            return each
    return None


def _served_card(obj: Any, handler: Any) -> Any:
    """The card the SDK server `obj` publishes, where it keeps one."""
    for owner, name in ((obj, "public_agent_card"), (obj, "agent_card"),
                        (handler, "_agent_card"), (handler, "agent_card")):
        card = getattr(owner, name, None)
        if card is not None and not callable(card):
            return card
    return None


def wrap(obj: Any, modules: Sequence[str] = ()) -> AgentExecutor | None:
    """`obj` as an AgentExecutor, if it is an agent of a framework we adapt,
    or an SDK server's (its executor, served with its card). `modules`: where
    an SDK executor's card is looked for first (the `--agent` module)."""
    import importlib

    handler = sdk_handler(obj)
    if handler is not None:
        from a2a_grpc.adapters.sdk import SdkAgent

        return SdkAgent(handler.agent_executor, modules=modules,
                        published=_served_card(obj, handler))
    held = executor_and_card(obj)  # AG2's A2AServer
    if held is not None:
        from a2a_grpc.adapters.sdk import SdkAgent

        return SdkAgent(held[0], modules=modules, published=held[1])
    found = framework_of(obj)
    if found is None:
        return None
    _, module, cls = found
    if cls == "SdkAgent":
        from a2a_grpc.adapters.sdk import SdkAgent

        return SdkAgent(obj, modules=modules)
    adapter: AgentExecutor = getattr(importlib.import_module(module), cls)(obj)
    return adapter


def adopt(obj: Any) -> AgentExecutor:
    """`obj` as the server takes an agent: ours as it is, an SDK executor or a
    framework's agent in its adapter; TypeError for anything else."""
    if isinstance(obj, AgentExecutor):
        return obj
    agent = wrap(obj)
    if agent is None:
        raise TypeError(f"{type(obj).__name__} is not an a2a_grpc.AgentExecutor, an a2a-sdk "
                        "AgentExecutor, a LangGraph graph, a Pydantic AI or an ADK agent")
    return agent
