"""The public agent card at /.well-known/agent-card.json (spec §8).

The agent supplies what it is (name, description, version, provider,
skills, modes, capabilities it implements); the server adds the interfaces
it really serves, each with an absolute URL and protocol version "1.0".
Served with an ETag and Cache-Control; a matching If-None-Match gets 304.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from aiohttp import web

from a2a_grpc.context import CURRENT_VERSION
from generated.a2a_pb2 import AgentCard, AgentInterface

from .codec import to_dict

PATH = "/.well-known/agent-card.json"
CACHE_SECONDS = 300


@dataclass(frozen=True, slots=True)
class Interface:
    binding: str  # JSONRPC, HTTP+JSON, GRPC
    url: str


def with_interfaces(card: AgentCard, interfaces: list[Interface]) -> AgentCard:
    """`card` listing exactly `interfaces`, in order (the first is preferred)."""
    out = AgentCard()
    out.CopyFrom(card)
    del out.supported_interfaces[:]
    for i in interfaces:
        out.supported_interfaces.append(AgentInterface(
            url=i.url, protocol_binding=i.binding, protocol_version=CURRENT_VERSION))
    return out


class CardEndpoint:
    def __init__(self, card: AgentCard) -> None:
        self.update(card)

    def update(self, card: AgentCard) -> None:
        """Serve `card` from now on (e.g. once the real ports are known)."""
        self.body = json.dumps(to_dict(card), indent=1, ensure_ascii=False).encode()
        self.etag = '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'

    async def get(self, request: web.Request) -> web.Response:
        headers = {"ETag": self.etag, "Cache-Control": f"public, max-age={CACHE_SECONDS}"}
        wanted = request.headers.get("If-None-Match", "")
        if self.etag in {t.strip() for t in wanted.split(",")} or wanted.strip() == "*":
            return web.Response(status=304, headers=headers)
        return web.Response(body=self.body, headers=headers, content_type="application/json")
