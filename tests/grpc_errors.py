"""Reading A2A errors off a real gRPC call, the way the official clients do."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Any, NamedTuple

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2


class Seen(NamedTuple):
    code: grpc.StatusCode
    reason: str
    message: str
    fields: list[str]


def decode(err: grpc.aio.AioRpcError) -> Seen:
    raw = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
    assert raw is not None, f"no grpc-status-details-bin on {err.code()}: {err.details()}"
    status = status_pb2.Status.FromString(raw)
    # The official Python client insists that these two agree with the call.
    assert status.code == err.code().value[0]
    assert status.message == err.details()
    reason, fields = "", []
    for detail in status.details:
        info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
        if detail.Unpack(info):
            assert info.domain == "a2a-protocol.org"
            reason = info.reason
        elif detail.Unpack(bad):
            fields = [v.field for v in bad.field_violations]
    return Seen(err.code(), reason, err.details() or "", fields)


async def fails(call: Awaitable[Any]) -> Seen:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    return decode(info.value)


async def stream_fails(stream: AsyncIterator[Any]) -> Seen:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        async for _ in stream:
            pass
    return decode(info.value)
