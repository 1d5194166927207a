from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import aiohttp
import grpc
import pytest
from aiohttp.test_utils import TestServer

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.auth import AuthenticatedService, Gate
from a2a_grpc.bridge import BridgeConfig, create_app
from a2a_grpc.cards.card import card_for
from a2a_grpc.core.contract import A2AService
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.grpc_edge.server import GrpcServer, start_grpc
from a2a_grpc.grpc_edge.upstream import UpstreamService
from a2a_grpc.handler.generations import PreviewOptions
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.push.policy import PushPolicy
from a2a_grpc.push.sender import PushSender, SenderConfig
from a2a_grpc.stores import TaskStore
from tests.bindings import Binding, GrpcBinding, JsonRpcBinding, RestBinding
from tests.processes import reap, start_server, wait_serving

# `make test` runs the suite in parallel (pytest-xdist). What tests share is made
# once a run by whichever worker needs it first, the others waiting for it: the
# wheel and its virtualenvs (tests/packaging/installed.py: once), the interop
# peers' virtualenvs and node modules (tools/kits.py: one_maker). Tests in these
# folders install things on first use: time for it beyond the per-test timeout.
INSTALLING = ("tests/packaging/", "tests/interop/")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(f"/{folder}" in item.path.as_posix() for folder in INSTALLING):
            item.add_marker(pytest.mark.timeout(600))

# Webhook hosts the tests may name (never called: no sender runs in these tests).
TEST_POLICY = PushPolicy.from_flags([".example.com"])
# With a sender (stack(sender=True)): webhooks on loopback, which tests run.
SENDER_POLICY = PushPolicy.from_flags([".example.com", "127.0.0.1/32"], allow_http=True)
FAST_PUSH = SenderConfig(base_delay=0.05, max_attempts=4, idle_poll=0.05, timeout=2)


@dataclass
class Running:
    handler: RequestHandler
    server: GrpcServer
    channel: grpc.aio.Channel
    stub: A2AServiceStub

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.server.port}"


Serve = Callable[..., Awaitable[Running]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Start a real grpc.aio server on 127.0.0.1:0 and a channel to it."""
    started: list[Running] = []

    async def _serve(
        agent: AgentExecutor | None = None,
        *,
        card: pb.AgentCard | None = None,
        extended_card: pb.AgentCard | None = None,
        push: bool = True,
        streaming: bool = True,
        interrupted_only: bool = False,
    ) -> Running:
        agent = agent or DemoAgent()
        if card is None:
            card = card_for(agent)
            card.capabilities.push_notifications = push
            card.capabilities.streaming = streaming
        handler = RequestHandler(agent, card, extended_card=extended_card, push_policy=TEST_POLICY,
                                 interrupted_only=interrupted_only)
        server = await start_grpc(handler)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
        running = Running(handler, server, channel, A2AServiceStub(channel))
        started.append(running)
        return running

    yield _serve
    for r in started:
        await r.channel.close()
        await r.server.stop(0)
        await r.handler.close()


def user_message(text: str, *, task_id: str = "", context_id: str = "",
                 message_id: str | None = None) -> pb.Message:
    import uuid

    return pb.Message(
        message_id=message_id or str(uuid.uuid4()),
        role=pb.ROLE_USER,
        parts=[pb.Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


def send_request(text: str, **kw: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=user_message(text, **kw))


@dataclass
class Stack:
    """One handler served on gRPC and HTTP (real sockets), with a client per binding."""

    handler: RequestHandler
    grpc_server: GrpcServer
    channel: grpc.aio.Channel
    http: TestServer
    session: aiohttp.ClientSession
    sender: PushSender | None = None

    @property
    def base_url(self) -> str:
        return str(self.http.make_url("")).rstrip("/")

    def card(self) -> pb.AgentCard:
        """The handler's card, naming this stack's three interfaces."""
        card = pb.AgentCard()
        card.CopyFrom(self.handler.card)
        del card.supported_interfaces[:]
        for binding, url in (("GRPC", f"127.0.0.1:{self.grpc_server.port}"),
                             ("JSONRPC", self.base_url + "/"), ("HTTP+JSON", self.base_url)):
            card.supported_interfaces.add(url=url, protocol_binding=binding,
                                          protocol_version="1.0")
        return card

    def binding(self, name: str, headers: dict[str, str] | None = None) -> Binding:
        if name == "grpc":
            return GrpcBinding(self.channel, headers)
        if name == "jsonrpc":
            return JsonRpcBinding(self.session, self.base_url + "/", headers)
        return RestBinding(self.session, self.base_url, headers)


StackFactory = Callable[..., Awaitable[Stack]]


@pytest.fixture
async def stack() -> AsyncIterator[StackFactory]:
    made: list[Stack] = []

    async def _make(
        agent: AgentExecutor | None = None,
        *,
        card: pb.AgentCard | None = None,
        push: bool = True,
        streaming: bool = True,
        config: BridgeConfig | None = None,
        service: A2AService | None = None,
        store: TaskStore | None = None,
        sender: bool = False,
        interrupted_only: bool = False,
        gate: Gate | None = None,
        metrics: Metrics | None = None,
        observed: bool = False,
        preview: PreviewOptions | None = None,
    ) -> Stack:
        """`sender`: deliver push notifications (to webhooks on loopback).
        `gate`: authenticate every call (on all bindings) through it.
        `metrics` (or `observed`): count and trace every call, as `serve` does.
        `preview`: serve the A2A 1.1 draft to calls that ask for it."""
        agent = agent or DemoAgent()
        if card is None:
            card = card_for(agent)
            card.capabilities.push_notifications = push
            card.capabilities.streaming = streaming
        policy = SENDER_POLICY if sender else TEST_POLICY
        handler = RequestHandler(agent, card, store=store, push_policy=policy,
                                 interrupted_only=interrupted_only, preview=preview)
        secured = None if gate is None else AuthenticatedService(handler, gate)
        service = service or secured
        if metrics is not None:
            handler.observe(metrics)
        grpc_server = await start_grpc(handler, service=secured, metrics=metrics,
                                       observed=observed)
        http = TestServer(create_app(service or handler, card, config, metrics=metrics,
                                     observed=observed), host="127.0.0.1")
        await http.start_server()
        s = Stack(handler, grpc_server, grpc.aio.insecure_channel(
            f"127.0.0.1:{grpc_server.port}"), http, aiohttp.ClientSession())
        made.append(s)
        if sender:
            s.sender = PushSender(handler.store, policy, None, FAST_PUSH, metrics)
            await s.sender.start()
            handler.attach_sender(s.sender.wake)
        return s

    yield _make
    for s in made:
        if s.sender is not None:
            await s.sender.stop()
        await s.session.close()
        await s.http.close()
        await s.channel.close()
        await s.grpc_server.stop(0)
        await s.handler.close()


@dataclass
class Gateway:
    """Our gRPC server in another process, and the bridge in front of it, here."""

    proc: subprocess.Popen[str]
    upstream: UpstreamService
    http: TestServer
    session: aiohttp.ClientSession

    @property
    def base_url(self) -> str:
        return str(self.http.make_url("")).rstrip("/")

    def binding(self, name: str, headers: dict[str, str] | None = None) -> Binding:
        if name == "jsonrpc":
            return JsonRpcBinding(self.session, self.base_url + "/", headers)
        return RestBinding(self.session, self.base_url, headers)


GatewayFactory = Callable[[], Awaitable[Gateway]]


@pytest.fixture
async def gateway() -> AsyncIterator[GatewayFactory]:
    made: list[Gateway] = []

    async def _make() -> Gateway:
        server = await start_server("serve", "--agent", "tests.agents:PushEnabledDemo",
                                    "--grace", "0", "--allow-push-to", ".example.com")
        proc, port = server.proc, server.grpc_port
        try:
            channel = await wait_serving(port, proc)
        except BaseException:
            reap(proc)
            raise
        upstream = UpstreamService(f"127.0.0.1:{port}", channel)
        card = pb.AgentCard(name="gw", description="gw", version="1",
                            capabilities=pb.AgentCapabilities(streaming=True))
        http = TestServer(create_app(upstream, card), host="127.0.0.1")
        await http.start_server()
        g = Gateway(proc, upstream, http, aiohttp.ClientSession())
        made.append(g)
        return g

    yield _make
    for g in made:
        await g.session.close()
        await g.http.close()
        await g.upstream.close()
        reap(g.proc)
