"""The call a handler serves: its service parameters and who makes it (public API;
defined in core/call.py, where every layer can reach it)."""

from a2a_grpc.core.call import CURRENT_VERSION, CallContext, Identity

__all__ = ["CURRENT_VERSION", "CallContext", "Identity"]
