"""`--agent MODULE:ATTR`: the user's agent, loaded by name."""

from __future__ import annotations

import importlib
import os
import sys

from a2a_grpc.agent import AgentExecutor


def from_working_directory() -> None:
    """Let MODULE name a file in the working directory, as `python -m` does: the
    `a2a-grpc` script's sys.path starts at its own bin/ instead."""
    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)


def load_agent(spec: str) -> AgentExecutor:
    """`module:attr` -> an AgentExecutor (an instance, or a class/factory to call)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--agent wants MODULE:ATTR (e.g. myagents:Echo), got {spec!r}")
    from_working_directory()
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
