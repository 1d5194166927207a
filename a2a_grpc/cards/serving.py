"""The public card as served over HTTP (spec §8), whatever serves it: its
bytes, an ETag, Last-Modified, and whether a conditional request is answered
304. The HTTP faces (bridge/card.py) only carry it.

Last-Modified is when this content was first served: `serve` asks its store
(TaskStore.card_published), so replicas agree; alone, it is when `update`
saw the content. One card for both dialects: the 0.3 fields beside the 1.0
ones (a2a_grpc/cards/card03.py), unless `v03_fields` is off. A matching
If-None-Match, or (without one, as RFC 9110 §13.2.2 orders them) an
If-Modified-Since not before Last-Modified, is answered 304.
"""

from __future__ import annotations

import hashlib
import json
import time
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from google.protobuf import json_format

from a2a_grpc.cards.card03 import with_v03_fields
from a2a_grpc.cards.required import with_required_keys
from a2a_grpc.generated.a2a_pb2 import AgentCard

PATH = "/.well-known/agent-card.json"
OLD_PATH = "/.well-known/agent.json"  # where 0.1 and 0.2 clients look
CACHE_SECONDS = 300


class ServedCard:
    def __init__(self, card: AgentCard, v03_fields: bool = True) -> None:
        self.v03_fields = v03_fields  # False: a pure 1.0 card (serve --card-format 1.0)
        self.body = b""
        self.update(card)

    def update(self, card: AgentCard) -> None:
        """Serve `card` from now on (e.g. once the real ports are known)."""
        self.card = card
        data = json_format.MessageToDict(card)
        with_required_keys(data)  # empty or not: a 0.3 client refuses a card without them
        if self.v03_fields:
            with_v03_fields(data)
        body = json.dumps(data, indent=1, ensure_ascii=False).encode()
        if body != self.body:
            self.body = body
            self.digest = hashlib.sha256(body).hexdigest()[:32]
            self.etag = f'"{self.digest}"'
            self.since(time.time_ns())

    def since(self, ns: int) -> None:
        """The content has been what it is since `ns` (epoch nanoseconds)."""
        self.modified = datetime.fromtimestamp(ns // 1_000_000_000, UTC)  # HTTP dates: seconds
        self.last_modified = format_datetime(self.modified, usegmt=True)

    def headers(self) -> dict[str, str]:
        return {"ETag": self.etag, "Last-Modified": self.last_modified,
                "Cache-Control": f"public, max-age={CACHE_SECONDS}"}

    def unchanged(self, if_none_match: str | None, if_modified_since: str | None) -> bool:
        """Is a request with these headers answered 304?"""
        if if_none_match is not None:
            return (self.etag in {t.strip() for t in if_none_match.split(",")}
                    or if_none_match.strip() == "*")
        if if_modified_since is None:
            return False
        try:
            date = parsedate_to_datetime(if_modified_since)
        except (TypeError, ValueError):
            return False  # not a date: ignored (RFC 9110 §13.1.3)
        return date.tzinfo is not None and self.modified <= date
