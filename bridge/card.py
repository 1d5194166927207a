"""The public agent card at /.well-known/agent-card.json (spec §8), and at
/.well-known/agent.json where clients of the earlier drafts look for it.

Serves the card `a2a_grpc.cards.card.public_card` built, with an ETag and
Cache-Control; a matching If-None-Match gets 304. One card for both
generations: the 0.3 fields beside the 1.0 ones (a2a_grpc/legacy/card03.py).
"""

from __future__ import annotations

import hashlib
import json

from aiohttp import web

from a2a_grpc.bridge.codec import to_dict
from a2a_grpc.generated.a2a_pb2 import AgentCard
from a2a_grpc.legacy.card03 import with_v03_fields

PATH = "/.well-known/agent-card.json"
OLD_PATH = "/.well-known/agent.json"  # where 0.1 and 0.2 clients look
CACHE_SECONDS = 300


class CardEndpoint:
    def __init__(self, card: AgentCard) -> None:
        self.update(card)

    def update(self, card: AgentCard) -> None:
        """Serve `card` from now on (e.g. once the real ports are known)."""
        self.card = card
        data = to_dict(card)
        with_v03_fields(data)
        self.body = json.dumps(data, indent=1, ensure_ascii=False).encode()
        self.etag = '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'

    async def get(self, request: web.Request) -> web.Response:
        headers = {"ETag": self.etag, "Cache-Control": f"public, max-age={CACHE_SECONDS}"}
        wanted = request.headers.get("If-None-Match", "")
        if self.etag in {t.strip() for t in wanted.split(",")} or wanted.strip() == "*":
            return web.Response(status=304, headers=headers)
        return web.Response(body=self.body, headers=headers, content_type="application/json")
