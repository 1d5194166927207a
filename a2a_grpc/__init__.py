"""a2a-grpc: an A2A 1.0 server (gRPC first) with a small API for your agent.

    from a2a_grpc import AgentExecutor, RequestContext, TaskEvents
"""

from .agent import AgentExecutor, FollowUps, RequestContext, TaskEvents
from .context import CallContext
from .core.errors import A2AError
from .core.lifecycle import IllegalTransitionError
from .handler import RequestHandler

__all__ = [
    "A2AError",
    "AgentExecutor",
    "CallContext",
    "FollowUps",
    "IllegalTransitionError",
    "RequestContext",
    "RequestHandler",
    "TaskEvents",
]
