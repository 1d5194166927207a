from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import grpc
import pytest

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.demo import DemoAgent, demo_card
from a2a_grpc.handler import RequestHandler
from a2a_grpc.server import GrpcServer, card_for, start_grpc
from generated import a2a_pb2 as pb
from generated.a2a_pb2_grpc import A2AServiceStub


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
    ) -> Running:
        agent = agent or DemoAgent()
        if card is None:
            card = card_for(agent) if not isinstance(agent, DemoAgent) \
                else demo_card()
            card.capabilities.push_notifications = push
            card.capabilities.streaming = streaming
        handler = RequestHandler(agent, card, extended_card=extended_card)
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
