"""A2AClient: one object per agent, one method per RPC, over the best binding.

- `connect(url)` fetches and validates the agent card, then takes the first
  interface of `supportedInterfaces` whose binding this client speaks (or the
  caller's own order, `ClientOptions.prefer`). A `grpc://host:port` URL skips
  the card and talks gRPC directly.
- An agent that speaks A2A 0.3 only (its card is a 0.3 card, or lists its
  interfaces for 0.3 alone) is called in 0.3 (v03.py); the caller still
  sends and reads 1.0 messages.
- Every call carries `A2A-Version` (1.0, or 0.3 to a 0.3 agent), the interface's tenant (unless the
  request names one), credentials placed as the card's security schemes say,
  and whatever the interceptors add.
- Idempotent calls (reads, cancel, delete, subscribe, and sends: every send
  carries a messageId, which the server deduplicates) are retried with
  backoff on connection errors and UNAVAILABLE/503; creating a push config
  without an id is never retried.
- Streams are async iterators that close cleanly on `break`. When the agent
  declares the resumable-streams extension and a stream drops, the client
  resubscribes after the last event it saw; the caller sees one
  uninterrupted, gap-free sequence.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, TypeVar

import aiohttp
from google.protobuf.empty_pb2 import Empty
from google.protobuf.message import Message

from a2a_grpc.cards.card import RESUMABLE_STREAMS
from a2a_grpc.client import activated, wire
from a2a_grpc.client.binding import transport_for
from a2a_grpc.client.cards import card_in_catalog, choose_interface, fetch_card
from a2a_grpc.client.credentials import (
    OAuth2Token,
    api_key_place,
    put_credentials,
    query_credentials,
)
from a2a_grpc.client.errors import AgentDownError, AgentUnreachableError
from a2a_grpc.client.options import ClientOptions
from a2a_grpc.client.resume import resuming
from a2a_grpc.client.tls import ssl_context
from a2a_grpc.client.transports import Transport
from a2a_grpc.core.call import CURRENT_VERSION
from a2a_grpc.core.errors import (
    A2AError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
)
from a2a_grpc.core.stream import EventStream
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.observe import tracing

log = logging.getLogger("a2a_grpc.client")
BINDINGS = ("GRPC", "JSONRPC", "HTTP+JSON")
M = TypeVar("M", bound=Message)


class A2AClient:
    def __init__(self, card: pb.AgentCard, interface: pb.AgentInterface, transport: Transport,
                 session: aiohttp.ClientSession | None, options: ClientOptions) -> None:
        self.card = card
        self.interface = interface
        self.transport = transport
        self.options = options
        self._session = session
        self._key = api_key_place(card)
        self._oauth2 = None
        if options.oauth2 is not None:
            if session is None:
                raise ValueError("OAuth 2 needs an HTTP session: use A2AClient.connect or "
                                 "from_card")
            self._oauth2 = OAuth2Token(options.oauth2, card, session)

    # -- connecting --

    @classmethod
    async def connect(cls, url: str, options: ClientOptions | None = None) -> A2AClient:
        options = options or ClientOptions()
        context = ssl_context(options.ca_file, options.cert_file, options.key_file)
        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=context) if context is not None else None,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=None),
            trace_configs=[wire.trace_config()] if options.record else None)
        try:
            if url.startswith(("grpc://", "grpcs://")):
                # no card to read: a hosted agent is named by the calls' tenant
                card = pb.AgentCard(name=url, supported_interfaces=[pb.AgentInterface(
                    url=url, protocol_binding="GRPC", protocol_version=CURRENT_VERSION,
                    tenant=options.agent or "")])
                card.capabilities.streaming = True
                card.capabilities.extensions.add(uri=RESUMABLE_STREAMS.uri)
            else:
                if options.agent:
                    url = await card_in_catalog(session, url, options.agent)
                card = await fetch_card(session, url)
            secure = url.startswith(("https://", "grpcs://"))
            return cls.from_card(card, options, session, secure=secure)
        except BaseException:
            await session.close()
            raise

    @classmethod
    def from_card(cls, card: pb.AgentCard, options: ClientOptions | None = None,
                  session: aiohttp.ClientSession | None = None, *,
                  secure: bool = False) -> A2AClient:
        """`secure`: the card came over TLS, so gRPC uses TLS too."""
        options = options or ClientOptions()
        interface = choose_interface(card, options.prefer or BINDINGS, bool(options.prefer))
        session = session or aiohttp.ClientSession(
            trace_configs=[wire.trace_config()] if options.record else None)
        params = query_credentials(options.api_key, api_key_place(card))
        transport = transport_for(interface, options, session, params, secure)
        return cls(card, interface, transport, session, options)

    @staticmethod
    def activated() -> tuple[str, ...]:
        """The extensions the server activated for the last call this asyncio
        task made (from the response's A2A-Extensions or gRPC metadata)."""
        return activated.activated()

    async def close(self) -> None:
        await self.transport.close()
        if self._session is not None:
            await self._session.close()

    async def __aenter__(self) -> A2AClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the RPCs --

    async def send_message(self, req: pb.SendMessageRequest) -> pb.SendMessageResponse:
        return await self._call("SendMessage", req, pb.SendMessageResponse, idempotent=True)

    def send_streaming_message(self, req: pb.SendMessageRequest
                               ) -> AsyncIterator[pb.StreamResponse]:
        return self._stream("SendStreamingMessage", req)

    async def get_task(self, req: pb.GetTaskRequest) -> pb.Task:
        return await self._call("GetTask", req, pb.Task, idempotent=True)

    async def list_tasks(self, req: pb.ListTasksRequest) -> pb.ListTasksResponse:
        return await self._call("ListTasks", req, pb.ListTasksResponse, idempotent=True)

    async def cancel_task(self, req: pb.CancelTaskRequest) -> pb.Task:
        return await self._call("CancelTask", req, pb.Task, idempotent=True)

    def subscribe_to_task(self, req: pb.SubscribeToTaskRequest
                          ) -> AsyncIterator[pb.StreamResponse]:
        return self._stream("SubscribeToTask", req)

    async def create_task_push_notification_config(
            self, req: pb.TaskPushNotificationConfig) -> pb.TaskPushNotificationConfig:
        # With an id, creating is an upsert (safe to retry); without, it is not.
        return await self._call("CreateTaskPushNotificationConfig", req,
                                pb.TaskPushNotificationConfig, idempotent=bool(req.id))

    async def get_task_push_notification_config(
            self, req: pb.GetTaskPushNotificationConfigRequest) -> pb.TaskPushNotificationConfig:
        return await self._call("GetTaskPushNotificationConfig", req,
                                pb.TaskPushNotificationConfig, idempotent=True)

    async def list_task_push_notification_configs(
            self, req: pb.ListTaskPushNotificationConfigsRequest
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        return await self._call("ListTaskPushNotificationConfigs", req,
                                pb.ListTaskPushNotificationConfigsResponse, idempotent=True)

    async def delete_task_push_notification_config(
            self, req: pb.DeleteTaskPushNotificationConfigRequest) -> None:
        await self._call("DeleteTaskPushNotificationConfig", req, Empty, idempotent=True)

    async def get_extended_agent_card(self) -> pb.AgentCard:
        return await self._call("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest(),
                                pb.AgentCard, idempotent=True)

    # -- conveniences --

    @staticmethod
    def text_request(text: str, *, task_id: str = "", context_id: str = "",
                     parts: Sequence[pb.Part] = (), return_immediately: bool = False,
                     history_length: int | None = None) -> pb.SendMessageRequest:
        msg = pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, task_id=task_id,
                         context_id=context_id)
        if text:
            msg.parts.add(text=text)
        msg.parts.extend(parts)
        config = pb.SendMessageConfiguration(return_immediately=return_immediately)
        if history_length is not None:
            config.history_length = history_length
        return pb.SendMessageRequest(message=msg, configuration=config)

    async def send_text(self, text: str, **kw: Any) -> pb.SendMessageResponse:
        return await self.send_message(self.text_request(text, **kw))

    def stream_text(self, text: str, **kw: Any) -> AsyncIterator[pb.StreamResponse]:
        return self.send_streaming_message(self.text_request(text, **kw))

    # -- plumbing --

    async def _headers(self, rpc: str, extra: Mapping[str, str] | None = None,
                       extensions: tuple[str, ...] = ()) -> dict[str, str]:
        version = "0.3" if self.interface.protocol_version.startswith("0.3") else CURRENT_VERSION
        headers = {"A2A-Version": version, **self.options.headers, **(extra or {})}
        extensions = (*self.options.extensions, *extensions)
        if extensions:  # declared beside any the caller's own headers declare
            declared = [headers.pop(k) for k in list(headers) if k.lower() == "a2a-extensions"]
            uris = [u.strip() for v in declared for u in v.split(",") if u.strip()]
            headers["A2A-Extensions"] = ", ".join(dict.fromkeys([*uris, *extensions]))
        put_credentials(headers, self.options.bearer, self.options.basic, self.options.api_key,
                        self._key, self.transport.binding)
        if self._oauth2 is not None:
            headers["Authorization"] = f"Bearer {await self._oauth2.get()}"
        for intercept in self.options.interceptors:
            intercept(rpc, headers)
        tracing.inject(headers)  # the caller's trace goes on at the server (W3C traceparent)
        return headers

    def _scoped(self, req: M) -> M:
        tenant = self.options.tenant if self.options.tenant is not None else self.interface.tenant
        target: Any = req  # every request message here has a `tenant` field
        if tenant and "tenant" in req.DESCRIPTOR.fields_by_name and not target.tenant:
            target.tenant = tenant
        return req

    async def _call(self, rpc: str, req: Message, out: type[M], *, idempotent: bool) -> M:
        req = self._scoped(req)
        attempt, renewed = 0, False
        unreachable: UnavailableError | None = None  # the last attempt's, if it found no one
        while True:
            try:
                headers = await self._headers(rpc)
                # in this task (not wait_for's own): what the call learns (activated
                # extensions, a context variable) is the caller's to read
                async with asyncio.timeout(self.options.timeout):
                    result = await self.transport.call(rpc, req, headers, retry=attempt > 0)
                assert isinstance(result, out)
                return result
            except UnauthenticatedError:
                if self._oauth2 is None or renewed:
                    raise
                self._oauth2.forget()  # revoked or expired early: one fresh token, one retry
                renewed = True
            except ResourceExhaustedError as exc:  # refused before any work: any call retries
                attempt += 1
                if attempt > self.options.retries:
                    raise
                await self._after(exc, rpc, attempt)
            except AgentDownError:  # a retry waited for the server to come back: it did not
                raise
            except (UnavailableError, TimeoutError) as exc:
                attempt += 1
                if isinstance(exc, TimeoutError):
                    # after a connection failure, a whole timeout waiting for the agent
                    # to come back: it is down; say so now, not after every retry's wait
                    raise unreachable or self._no_answer(rpc) from None
                unreachable = exc
                if not idempotent or attempt > self.options.retries:
                    raise
                delay = self.options.backoff * 2 ** (attempt - 1)
                log.info("%s failed (%s); retry %d in %.2f s", rpc, exc, attempt, delay)
                await asyncio.sleep(delay)

    def _no_answer(self, rpc: str) -> AgentUnreachableError:
        return AgentUnreachableError(f"{rpc} got no answer from {self.interface.url} in "
                                     f"{self.options.timeout:g} s")

    async def _open(self, rpc: str, req: Message, extra: Mapping[str, str] | None = None,
                    retry: bool = False, extensions: tuple[str, ...] = ()) -> EventStream:
        attempt = 0
        unreachable: UnavailableError | None = None
        while True:
            try:
                headers = await self._headers(rpc, extra, extensions)
                async with asyncio.timeout(self.options.timeout):
                    return await self.transport.stream(rpc, req, headers,
                                                       retry=attempt > 0 or retry)
            except TimeoutError:
                raise unreachable or self._no_answer(rpc) from None
            except AgentDownError:
                raise
            except (UnavailableError, ResourceExhaustedError) as exc:
                attempt += 1
                if isinstance(exc, UnavailableError):
                    unreachable = exc
                if attempt > self.options.retries:
                    raise
                await self._after(exc, rpc, attempt)

    async def _after(self, exc: A2AError, rpc: str, attempt: int) -> None:
        """Wait before retry `attempt`: backoff, and at least the Retry-After the
        server gave (a limit, or a server at capacity), jittered so that the
        callers it refused together do not come back together."""
        delay = self.options.backoff * 2 ** (attempt - 1)
        if isinstance(exc, ResourceExhaustedError):
            delay = max(delay, exc.retry_after) * random.uniform(1.0, 1.5)
        log.info("%s refused (%s); retry %d in %.2f s", rpc, exc, attempt, delay)
        await asyncio.sleep(delay)

    def _stream(self, rpc: str, req: Message) -> AsyncIterator[pb.StreamResponse]:
        resumable = self.options.resume and any(
            x.uri == RESUMABLE_STREAMS.uri for x in self.card.capabilities.extensions)
        return resuming(self._open, self._scoped, rpc, self._scoped(req), resumable=resumable,
                        retries=self.options.retries, backoff=self.options.backoff)
