"""`--agent MODULE:ATTR`: the user's agent, loaded by name; `--host-agent
NAME=MODULE:ATTR`, each of several agents one server hosts."""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
import traceback
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from a2a_grpc.adapters import wrap
from a2a_grpc.agent import AgentExecutor
from a2a_grpc.cards.written import card_of, read_card
from a2a_grpc.generated.a2a_pb2 import AgentCard


def from_working_directory() -> None:
    """Let MODULE name a file in the working directory, as `python -m` does: the
    `a2a-grpc` script's sys.path starts at its own bin/ instead."""
    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)


class AgentLoadError(ValueError):
    """The agent's module was found but failed as it was imported: a
    SyntaxError, or an exception its code raised. Said in one line, with the
    file and line, rather than as a traceback."""


def _import(module_name: str, spec: str, what: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ImportError:
        raise
    except SyntaxError as exc:
        where = f" ({exc.filename}, line {exc.lineno})" if exc.filename else ""
        raise AgentLoadError(f"cannot load {what} {spec!r}: SyntaxError: {exc.msg}"
                             f"{where}") from None
    except Exception as exc:  # the module's own code raised as it ran
        frames = traceback.extract_tb(exc.__traceback__)
        user = [f for f in frames if "importlib" not in f.filename] or frames
        where = f"{user[-1].filename}, line {user[-1].lineno}, " if user else ""
        raise AgentLoadError(f"cannot load {what} {spec!r}: {type(exc).__name__}: {exc} "
                             f"({where}importing {module_name})") from None


# A hosted agent's name is a path segment of its URLs; these first segments are the server's.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")
RESERVED = frozenset({"v1", ".well-known", "inspector", "metrics", "healthz", "readyz"})


def bad_name(name: str) -> bool:
    """Not a hosted agent's name: each is a path segment, and not a reserved one."""
    return not NAME.match(name) or name in RESERVED


NAMES_ARE = ("letters, digits, '.', '_' or '-' (a path segment), and none of "
             f"{sorted(RESERVED)}")


def load_hosted(specs: Sequence[str]) -> Awaitable[dict[str, AgentExecutor]]:
    """`NAME=MODULE:ATTR` (or `NAME=demo`, the built-in demo agent) each ->
    the agents by name, made in the server's event loop (async factories)."""
    loaded: dict[str, AgentExecutor | Awaitable[AgentExecutor]] = {}
    for spec in specs:
        name, sep, target = spec.partition("=")
        if not sep or not target:
            raise ValueError(f"--host-agent wants NAME=MODULE:ATTR, got {spec!r}")
        if bad_name(name):
            raise ValueError(f"--host-agent {spec!r}: the name must be {NAMES_ARE}")
        if name in loaded:
            raise ValueError(f"--host-agent: two agents are named {name!r}")
        if target == "demo":
            from a2a_grpc.demos.demo import DemoAgent

            loaded[name] = DemoAgent()
        else:
            loaded[name] = load_agent(target)

    async def made() -> dict[str, AgentExecutor]:
        return {name: a if isinstance(a, AgentExecutor) else await a
                for name, a in loaded.items()}

    return made()


def with_card(agent: AgentExecutor, spec: str | None) -> AgentExecutor:
    """`--card FILE|MODULE:ATTR`: serve `agent` with that card (its interfaces
    left to the server)."""
    if spec:
        agent.card = load_card(spec)  # type: ignore[attr-defined]  # what card_for reads
    return agent


def load_card(spec: str) -> AgentCard:
    """A card file (1.0 or 0.3 JSON), or MODULE:ATTR naming an AgentCard of ours
    or of the official SDK (either generation), or a function returning one."""
    path = Path(spec)
    if path.suffix == ".json" or path.exists() or ":" not in spec:
        return read_card(path)
    module_name, _, attr = spec.partition(":")
    from_working_directory()
    try:
        card = getattr(_import(module_name, spec, "the agent card"), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load the agent card {spec!r}: {exc}") from exc
    if callable(card) and not hasattr(card, "SerializeToString") and not hasattr(
            card, "model_dump"):
        card = card()
    if isinstance(card, AgentCard):
        return card
    if hasattr(card, "SerializeToString"):  # a2a-sdk 1.x: lf.a2a.v1, the same bytes
        return AgentCard.FromString(card.SerializeToString())
    if hasattr(card, "model_dump"):  # a2a-sdk 0.3: pydantic, 0.3's JSON
        return card_of(card.model_dump(mode="json", by_alias=True, exclude_none=True))
    raise ValueError(f"{spec!r} is not an agent card (got {type(card).__name__})")


def load_agent(spec: str) -> AgentExecutor | Awaitable[AgentExecutor]:
    """`module:attr` -> an AgentExecutor (an instance, or a class/factory to call),
    or a framework's agent (a compiled LangGraph graph, a Pydantic AI or an ADK
    agent) wrapped in its adapter (a2a_grpc.adapters). An `async def` factory
    is awaited in the server's event loop (what a graph whose checkpointer
    opens there, such as AsyncSqliteSaver, needs): an awaitable is returned."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--agent wants MODULE:ATTR (e.g. myagents:Echo), got {spec!r}")
    from_working_directory()
    try:
        obj = getattr(_import(module_name, spec, "agent"), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load agent {spec!r}: {exc}") from exc
    if inspect.iscoroutinefunction(obj):
        return _awaited(obj, spec)
    return _agent_of(obj, spec)


async def _awaited(factory: Callable[[], Awaitable[Any]], spec: str) -> AgentExecutor:
    try:
        made = await factory()
    except Exception as exc:
        raise ValueError(f"cannot create agent {spec!r}: {exc}") from exc
    return _agent_of(made, spec)


def _agent_of(obj: Any, spec: str) -> AgentExecutor:
    # A card is looked for in the --agent module first (a shim that builds the
    # framework's executor beside its card), then where the executor's class is.
    modules = (spec.partition(":")[0],)
    agent = wrap(obj, modules)  # an SDK executor or server, a framework's agent
    if agent is not None:
        return agent
    agent = obj
    if callable(obj) and not isinstance(obj, AgentExecutor):
        try:
            agent = obj()
        except Exception as exc:
            raise ValueError(f"cannot create agent {spec!r}: {exc}") from exc
        agent = wrap(agent, modules) or agent
    if not isinstance(agent, AgentExecutor):
        raise ValueError(f"{spec!r} is not an a2a_grpc.AgentExecutor, an a2a-sdk "
                         f"AgentExecutor, a LangGraph graph, a Pydantic AI or an ADK agent "
                         f"(got {type(agent).__name__})")
    return agent
