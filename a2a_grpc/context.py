"""The call a handler serves: its service parameters and who makes it (public API;
defined in core/context.py, where every layer can reach it)."""

from a2a_grpc.core.context import CURRENT_VERSION, CallContext, Identity

__all__ = ["CURRENT_VERSION", "CallContext", "Identity"]
