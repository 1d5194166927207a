"""Whatever bytes a gRPC client sends as a request (random, truncated, or a
valid message with random fields and metadata), both services (1.0 and 0.3)
answer with a status that names the client's mistake: never INTERNAL or
UNKNOWN, never a traceback in the details; the next well-formed call is
answered correctly. `A2A_FUZZ_EXAMPLES=100000` runs the long version."""

from __future__ import annotations

import grpc
from hypothesis import given
from hypothesis import strategies as st

from a2a_grpc.core.methods import METHODS
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import StackFactory
from tests.property.fuzzing import LEAKS, SETTINGS, one_stack

RPCS = sorted(m for m in METHODS)
SERVICES = ["lf.a2a.v1.A2AService", "a2a.v1.A2AService"]
V03 = ["SendMessage", "SendStreamingMessage", "GetTask", "CancelTask", "TaskSubscription",
       "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
       "ListTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig", "GetAgentCard"]
CLIENT_MISTAKES = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                   grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.UNIMPLEMENTED,
                   grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.OUT_OF_RANGE}


def _valid(text: str) -> bytes:
    return pb.SendMessageRequest(message=pb.Message(
        message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text=text)])).SerializeToString()


payloads = (st.binary(max_size=200)
            | st.builds(lambda b, n: b[:n], st.just(_valid("hello")), st.integers(0, 20))
            | st.builds(lambda b, junk: b + junk, st.just(_valid("hi")), st.binary(max_size=16)))
metadata = st.lists(st.tuples(
    st.sampled_from(["a2a-version", "a2a-extensions", "a2a-last-event-id", "authorization",
                     "x-api-key"]),
    st.sampled_from(["", "1.0", "0.3", "2.5", "-1", "99999999999999999999", "x,y", "Bearer"])
    | st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=20)),
    max_size=3)


def _same(raw: bytes) -> bytes:
    return raw


@SETTINGS
@given(service=st.sampled_from(SERVICES), data=st.data(), body=payloads, md=metadata)
async def test_grpc_never_fails_internally(stack: StackFactory, service: str,
                                           data: st.DataObject, body: bytes,
                                           md: list[tuple[str, str]]) -> None:
    s = await one_stack(stack)
    rpc = data.draw(st.sampled_from(RPCS if service.startswith("lf.") else V03))
    streaming = rpc in ("SendStreamingMessage", "SubscribeToTask", "TaskSubscription")
    path = f"/{service}/{rpc}"
    try:
        if streaming:
            call = s.channel.unary_stream(path, request_serializer=_same,
                                          response_deserializer=_same)(body, metadata=md,
                                                                          timeout=10)
            async for _ in call:
                pass
        else:
            await s.channel.unary_unary(path, request_serializer=_same,
                                        response_deserializer=_same)(body, metadata=md,
                                                                        timeout=10)
    except grpc.aio.AioRpcError as err:
        assert err.code() in CLIENT_MISTAKES, (path, err.code(), err.details())
        assert not LEAKS.search(err.details() or ""), err.details()
    listed = await s.channel.unary_unary(
        "/lf.a2a.v1.A2AService/ListTasks", request_serializer=pb.ListTasksRequest.SerializeToString,
        response_deserializer=pb.ListTasksResponse.FromString)(pb.ListTasksRequest(), timeout=10)
    assert isinstance(listed, pb.ListTasksResponse)
