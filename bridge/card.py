"""The public agent card at /.well-known/agent-card.json (spec §8), and at
/.well-known/agent.json where clients of the earlier drafts look for it, on
aiohttp: what is served, and when 304 answers, is a2a_grpc/cards/serving.py's."""

from __future__ import annotations

from aiohttp import web

from a2a_grpc.cards.serving import OLD_PATH, PATH, ServedCard

__all__ = ["OLD_PATH", "PATH", "CardEndpoint"]


class CardEndpoint(ServedCard):
    async def get(self, request: web.Request) -> web.Response:
        headers = self.headers()
        if self.unchanged(request.headers.get("If-None-Match"),
                          request.headers.get("If-Modified-Since")):
            return web.Response(status=304, headers=headers)
        return web.Response(body=self.body, headers=headers, content_type="application/json")
