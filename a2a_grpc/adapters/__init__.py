"""Agents written with a framework, served as A2A agents: LangGraph graphs
(`[langgraph]`), Pydantic AI agents (`[pydantic-ai]`) and Google ADK agents
(`[adk]`). `wrap` recognises such an object (what `serve --agent` is given)
without importing any framework; each adapter imports its own."""

from __future__ import annotations

from typing import Any

from a2a_grpc.agent import AgentExecutor

# (the framework, the module its classes come from, the adapter's module and class)
FRAMEWORKS = (
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


def wrap(obj: Any) -> AgentExecutor | None:
    """`obj` as an AgentExecutor, if it is an agent of a framework we adapt."""
    import importlib

    found = framework_of(obj)
    if found is None:
        return None
    _, module, cls = found
    adapter: AgentExecutor = getattr(importlib.import_module(module), cls)(obj)
    return adapter
