"""An error as a `google.rpc.Status`: the form gRPC trailers and REST bodies share.

The status carries the §5.4 code, the client-safe message, an ErrorInfo
(reason, domain `a2a-protocol.org`, metadata) and, for validation errors, a
BadRequest listing the fields (spec §10.6, §11.6).
"""

from __future__ import annotations

from google.protobuf.any_pb2 import Any
from google.protobuf.duration_pb2 import Duration
from google.rpc import error_details_pb2, status_pb2

from a2a_grpc.core.errors import (
    DOMAIN,
    A2AError,
    FieldViolation,
    InternalError,
    ResourceExhaustedError,
    error_for,
    public,
    wire_of,
)


def rpc_status_of(exc: BaseException) -> status_pb2.Status:
    err = public(exc)
    wire = wire_of(err)
    info = error_details_pb2.ErrorInfo(reason=wire.reason, domain=DOMAIN, metadata=err.metadata)
    details = [_pack(info)]
    if err.violations:
        bad = error_details_pb2.BadRequest()
        for v in err.violations:
            bad.field_violations.add(field=v.field, description=v.description)
        details.append(_pack(bad))
    if isinstance(err, ResourceExhaustedError):
        details.append(_pack(error_details_pb2.RetryInfo(
            retry_delay=Duration(seconds=err.retry_after))))
    return status_pb2.Status(code=wire.grpc, message=err.message, details=details)


def _pack(detail: error_details_pb2.ErrorInfo | error_details_pb2.BadRequest
          | error_details_pb2.RetryInfo) -> Any:
    packed = Any()
    packed.Pack(detail)
    return packed


def error_of_status(status: status_pb2.Status) -> A2AError | None:
    """The A2A error a `google.rpc.Status` carries (by its ErrorInfo), if any."""
    reason, metadata, violations = None, {}, []
    for detail in status.details:
        info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
        if detail.Unpack(info):
            reason, metadata = info.reason, dict(info.metadata)
        elif detail.Unpack(bad):
            violations = [FieldViolation(v.field, v.description) for v in bad.field_violations]
    if reason is None:
        return None
    error = error_for(reason, status.message, metadata, violations)
    return error if not isinstance(error, InternalError) or reason == "INTERNAL_ERROR" else None
