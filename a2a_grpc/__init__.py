"""a2a-grpc: an A2A 1.0 server (gRPC first) with a small API for your agent.

    from a2a_grpc import AgentExecutor, RequestContext, TaskEvents

What a program that serves an agent itself uses is here too: the handler,
the card's interfaces, the gRPC server (the HTTP side: a2a_grpc.bridge), and
the client (a2a_grpc.client). Each is imported when first asked for, so that
the command line's client commands load none of the server.
"""

import importlib

TYPE_CHECKING = False  # not typing's: a Ctrl-C while the command line starts finds less loaded
if TYPE_CHECKING:
    from typing import Any

    from a2a_grpc.agent import AgentExecutor, FollowUps, RequestContext, TaskEvents
    from a2a_grpc.cards import Interface, public_card
    from a2a_grpc.core.call import CallContext
    from a2a_grpc.core.errors import A2AError
    from a2a_grpc.core.lifecycle import IllegalTransitionError
    from a2a_grpc.core.version import VERSION as __version__
    from a2a_grpc.grpc_edge import start_grpc
    from a2a_grpc.handler import RequestHandler

_WHERE = {
    "A2AError": "a2a_grpc.core.errors",
    "AgentExecutor": "a2a_grpc.agent",
    "CallContext": "a2a_grpc.core.call",
    "FollowUps": "a2a_grpc.agent",
    "IllegalTransitionError": "a2a_grpc.core.lifecycle",
    "Interface": "a2a_grpc.cards",
    "RequestContext": "a2a_grpc.agent",
    "RequestHandler": "a2a_grpc.handler",
    "TaskEvents": "a2a_grpc.agent",
    "public_card": "a2a_grpc.cards",
    "start_grpc": "a2a_grpc.grpc_edge",
    "__version__": "a2a_grpc.core.version",
}

__all__ = [
    "A2AError",
    "AgentExecutor",
    "CallContext",
    "FollowUps",
    "IllegalTransitionError",
    "Interface",
    "RequestContext",
    "RequestHandler",
    "TaskEvents",
    "__version__",
    "public_card",
    "start_grpc",
]


def __getattr__(name: str) -> "Any":
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'a2a_grpc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), "VERSION" if name == "__version__" else name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
