"""The public agent card at /.well-known/agent-card.json (spec §8), and at
/.well-known/agent.json where clients of the earlier drafts look for it:
what is served, and when 304 answers, is a2a_grpc/cards/serving.py's."""

from __future__ import annotations

from a2a_grpc.bridge.face import Answer, Incoming
from a2a_grpc.cards.serving import OLD_PATH, PATH, ServedCard

__all__ = ["OLD_PATH", "PATH", "CardEndpoint"]


class CardEndpoint(ServedCard):
    async def get(self, request: Incoming) -> Answer:
        headers = self.headers()
        if self.unchanged(request.headers.get("If-None-Match"),
                          request.headers.get("If-Modified-Since")):
            return Answer(304, b"", headers)
        return Answer(200, self.body, {**headers, "Content-Type": "application/json"})
