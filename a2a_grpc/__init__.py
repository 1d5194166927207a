"""a2a-grpc: an A2A 1.0 server (gRPC first) with a small API for your agent.

    from a2a_grpc import AgentExecutor, RequestContext, TaskEvents

What a program that serves an agent itself uses is here too: the handler,
the card's interfaces, the gRPC server (the HTTP side: a2a_grpc.bridge), and
the client (a2a_grpc.client).
"""

from a2a_grpc.agent import AgentExecutor, FollowUps, RequestContext, TaskEvents
from a2a_grpc.cards import Interface, public_card
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import A2AError
from a2a_grpc.core.lifecycle import IllegalTransitionError
from a2a_grpc.core.version import VERSION as __version__
from a2a_grpc.grpc_edge import start_grpc
from a2a_grpc.handler import RequestHandler

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
