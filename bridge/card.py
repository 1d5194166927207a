"""The public agent card at /.well-known/agent-card.json (spec §8).

Serves the card `a2a_grpc.cards.public_card` built, with an ETag and
Cache-Control; a matching If-None-Match gets 304.
"""

from __future__ import annotations

import hashlib
import json

from aiohttp import web

from generated.a2a_pb2 import AgentCard

from .codec import to_dict

PATH = "/.well-known/agent-card.json"
CACHE_SECONDS = 300


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
