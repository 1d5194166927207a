"""`--agent MODULE:ATTR`: the user's agent, loaded by name."""

from __future__ import annotations

import importlib

from a2a_grpc.agent import AgentExecutor


def load_agent(spec: str) -> AgentExecutor:
    """`module:attr` -> an AgentExecutor (an instance, or a class/factory to call)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--agent wants MODULE:ATTR (e.g. myagents:Echo), got {spec!r}")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load agent {spec!r}: {exc}") from exc
    agent = obj
    if callable(obj) and not isinstance(obj, AgentExecutor):
        try:
            agent = obj()
        except Exception as exc:
            raise ValueError(f"cannot create agent {spec!r}: {exc}") from exc
    if not isinstance(agent, AgentExecutor):
        raise ValueError(f"{spec!r} is not an a2a_grpc.AgentExecutor (got {type(agent).__name__})")
    return agent
