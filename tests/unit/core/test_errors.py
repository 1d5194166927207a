"""The one error table against spec §5.4, and how errors are looked up."""

from __future__ import annotations

import pytest
from google.rpc import code_pb2, error_details_pb2

from a2a_grpc.core import errors
from a2a_grpc.core.lifecycle import IllegalTransitionError
from a2a_grpc.core.rpc_status import rpc_status_of

# Spec §5.4 (A2A 1.0.1), verbatim: error -> (JSON-RPC code, gRPC status, HTTP status).
SPEC_5_4 = {
    "TaskNotFoundError": (-32001, "NOT_FOUND", 404),
    "TaskNotCancelableError": (-32002, "FAILED_PRECONDITION", 400),
    "PushNotificationNotSupportedError": (-32003, "FAILED_PRECONDITION", 400),
    "UnsupportedOperationError": (-32004, "FAILED_PRECONDITION", 400),
    "ContentTypeNotSupportedError": (-32005, "INVALID_ARGUMENT", 400),
    "InvalidAgentResponseError": (-32006, "INTERNAL", 500),
    "ExtendedAgentCardNotConfiguredError": (-32007, "FAILED_PRECONDITION", 400),
    "ExtensionSupportRequiredError": (-32008, "FAILED_PRECONDITION", 400),
    "VersionNotSupportedError": (-32009, "FAILED_PRECONDITION", 400),
    # The A2A 1.1 draft (dev-1.1 §5.4), for the opt-in preview.
    "TaskGenerationMismatchError": (-32010, "ABORTED", 409),
    # JSON-RPC 2.0 standard errors.
    "ParseError": (-32700, "INVALID_ARGUMENT", 400),
    "InvalidRequestError": (-32600, "INVALID_ARGUMENT", 400),
    "MethodNotFoundError": (-32601, "NOT_FOUND", 404),
    "InvalidParamsError": (-32602, "INVALID_ARGUMENT", 400),
    "InternalError": (-32603, "INTERNAL", 500),
}


@pytest.mark.parametrize("name", sorted(SPEC_5_4))
def test_wire_table_matches_spec(name: str) -> None:
    cls = getattr(errors, name)
    wire = errors.WIRE[cls]
    jsonrpc, grpc_name, http = SPEC_5_4[name]
    assert (wire.jsonrpc, code_pb2.Code.Name(wire.grpc), wire.http) == (jsonrpc, grpc_name, http)
    # ErrorInfo reasons are the UPPER_SNAKE names, as the official clients expect.
    assert wire.reason in {"PARSE_ERROR", "INTERNAL_ERROR"} or wire.reason == "_".join(
        w.upper() for w in _words(name.removesuffix("Error")))


def _words(camel: str) -> list[str]:
    out: list[str] = []
    for ch in camel:
        if ch.isupper() and out:
            out.append("")
        out[-1:] = [(out[-1] if out else "") + ch]
    return out


def test_every_error_class_is_in_the_table() -> None:
    classes = {c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, errors.A2AError)}
    classes.discard(errors.A2AError)
    assert classes == set(errors.WIRE)


def test_subclasses_map_like_their_parent() -> None:
    parent = errors.WIRE[errors.InvalidAgentResponseError]
    assert errors.wire_of(IllegalTransitionError("x")) is parent


@pytest.mark.parametrize("exc", [RuntimeError("secret db password"), errors.InternalError("oops"),
                                 KeyError("k")])
def test_unexpected_errors_are_internal_with_a_fixed_message(exc: Exception) -> None:
    status = rpc_status_of(exc)
    assert status.code == code_pb2.INTERNAL
    assert status.message == "Internal error"


def test_status_carries_error_info_and_bad_request() -> None:
    exc = errors.InvalidParamsError(
        "bad", violations=[errors.FieldViolation("message.role", "is required")])
    status = rpc_status_of(exc)
    info = error_details_pb2.ErrorInfo()
    bad = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(info) and status.details[1].Unpack(bad)
    assert (info.reason, info.domain) == ("INVALID_PARAMS", "a2a-protocol.org")
    assert bad.field_violations[0].field == "message.role"
