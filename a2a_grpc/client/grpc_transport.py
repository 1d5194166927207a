"""The gRPC transport (transports.py has the others and their shape): a
channel per agent, each RPC by the generated stub, errors rebuilt from the
status and its details, a retry after a connection failure waiting a moment
for the server to be back."""

from __future__ import annotations

import asyncio
import itertools

import grpc
from google.protobuf.message import Message

from a2a_grpc.client import activated, wire
from a2a_grpc.client.errors import AgentDownError, AgentUnreachableError, BadResponseError
from a2a_grpc.client.transports import Headers
from a2a_grpc.core.errors import A2AError, UnavailableError
from a2a_grpc.core.stream import FIRST_EVENT_ID, LAST_EVENT_ID, EventStream
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.grpc_edge.servicer import EXTENSIONS
from a2a_grpc.grpc_edge.upstream import error_of_call, grpc_numbers, read_events

RECONNECT_S = 1.0  # how long a gRPC retry waits for the server to be back


async def _listening(target: str) -> bool:
    """Whether something takes TCP connections at host:port (then a channel
    that never got ready met a server that is not gRPC's)."""
    host, _, port = target.rpartition(":")
    try:
        async with asyncio.timeout(RECONNECT_S):
            _, writer = await asyncio.open_connection(host.strip("[]"), int(port))
    except (OSError, ValueError, TimeoutError):
        return False
    writer.close()
    return True


class GrpcTransport:
    binding = "GRPC"

    def __init__(self, target: str, credentials: grpc.ChannelCredentials | None = None,
                 record: bool = False) -> None:
        self.target = target
        self.record = record  # report each call to the context's wire.Recorder
        # Reconnect quickly after a drop (gRPC's default first backoff is 1 s).
        options = [("grpc.initial_reconnect_backoff_ms", 100),
                   ("grpc.min_reconnect_backoff_ms", 100), ("grpc.max_reconnect_backoff_ms", 5000)]
        self.channel = (grpc.aio.insecure_channel(target, options=options) if credentials is None
                        else grpc.aio.secure_channel(target, credentials, options=options))
        self._stub = A2AServiceStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    async def _reconnected(self, retry: bool) -> None:
        """Before a retry after a connection failure: the channel connected again
        within RECONNECT_S, else AgentUnreachableError (a server restarting is
        back by then; a server that is down is said to be at once, not after
        every retry has waited out the call's timeout)."""
        if not retry:
            return
        try:
            async with asyncio.timeout(RECONNECT_S):
                await self.channel.channel_ready()
        except TimeoutError:
            if await _listening(self.target):
                raise BadResponseError(
                    f"{self.target} takes connections but makes no gRPC channel: is it an A2A "
                    "gRPC server? (an HTTP agent's URL begins with http://; one with TLS, "
                    "grpcs://)") from None
            raise AgentDownError(
                f"cannot reach the A2A server at {self.target} (no connection in "
                f"{RECONNECT_S:g} s); check that it runs") from None

    @staticmethod
    def _metadata(headers: Headers) -> list[tuple[str, str]]:
        return [(k.lower(), v) for k, v in headers.items()]

    def _error(self, err: grpc.aio.AioRpcError) -> A2AError:
        error = error_of_call(err, self.target)
        if type(error) is UnavailableError:
            return AgentUnreachableError(error.message)
        return error

    async def call(self, rpc: str, req: Message, headers: Headers,
                   retry: bool = False) -> Message:
        await self._reconnected(retry)
        metadata = self._metadata(headers)
        begun = wire.grpc_begin(self.target, rpc, metadata, req) if self.record else None
        try:
            call = getattr(self._stub, rpc)(req, metadata=metadata, wait_for_ready=retry)
            result: Message = await (call if begun is None else wire.grpc_unary(begun, call))
            activated.seen(dict(await call.initial_metadata() or ()).get(EXTENSIONS))
            return result
        except grpc.aio.AioRpcError as err:
            raise self._error(err) from None

    async def stream(self, rpc: str, req: Message, headers: Headers,
                     retry: bool = False) -> EventStream:
        await self._reconnected(retry)
        metadata = self._metadata(headers)
        begun = wire.grpc_begin(self.target, rpc, metadata, req) if self.record else None
        call = getattr(self._stub, rpc)(req, metadata=metadata, wait_for_ready=retry)
        if begun is not None:
            call = wire.RecordedStream(begun, call)
        try:
            first = await call.read()
            headers_in = dict(await call.initial_metadata() or ())
            first_id = headers_in.get(FIRST_EVENT_ID)
            activated.seen(headers_in.get(EXTENSIONS))
        except grpc.aio.AioRpcError as err:
            raise self._error(err) from None
        resume = {k.lower(): v for k, v in headers.items()}.get(LAST_EVENT_ID)
        numbers = grpc_numbers(first_id, resume) or itertools.repeat(None)
        return EventStream(read_events(call, first, numbers, self._error))
