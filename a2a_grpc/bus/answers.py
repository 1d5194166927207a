"""What a replica answers another's `EventBus.ask` with, over the hub and
Redis alike: done, not done (it does not run the task), or refused, with the
error as a google.rpc.Status after the mark."""

from __future__ import annotations

from google.rpc import status_pb2

from a2a_grpc.core.errors import A2AError, InternalError
from a2a_grpc.core.rpc_status import error_of_status, rpc_status_of

DONE, NOT_DONE, REFUSED = b"1", b"0", b"!"


def refusal(error: A2AError) -> bytes:
    """The answer that carries `error` to the asking replica."""
    status: bytes = rpc_status_of(error).SerializeToString()
    return REFUSED + status


def answered(answer: bytes) -> bool:
    """Was an `ask` done (True), not done (False)? Raises a refusal's error."""
    if answer.startswith(REFUSED):
        status = status_pb2.Status.FromString(answer[len(REFUSED):])
        raise error_of_status(status) or InternalError(status.message)
    return answer == DONE
