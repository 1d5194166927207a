"""The catalog of the agents one server hosts (`serve --host-agent`), at
/.well-known/ai-catalog.json: an AI Catalog (the shape A2A PR #2240 points
discovery to; Agent-Card/ai-catalog's specification, 1.0), one entry per
agent, each naming its card by URL.

    {"specVersion": "1.0",
     "entries": [{"identifier": "urn:air:HOST:a2a:NAME",
                  "type": "application/a2a-agent-card+json",
                  "url": "https://HOST/NAME/.well-known/agent-card.json",
                  "updatedAt": "2026-11-26T10:00:00Z"}, ...]}

The entries leave out the name and description: the card is their source
(the catalog's specification asks so, so that they cannot drift apart).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from urllib.parse import urlsplit

from a2a_grpc.cards.serving import PATH
from a2a_grpc.generated.a2a_pb2 import AgentCard

MEDIA_TYPE = "application/ai-catalog+json"
CARD_TYPE = "application/a2a-agent-card+json"
CATALOG_PATH = "/.well-known/ai-catalog.json"


def card_url(card: AgentCard) -> str:
    """Where `card` is served: under its HTTP+JSON interface's URL (or JSON-RPC's)."""
    for binding in ("HTTP+JSON", "JSONRPC"):
        for i in card.supported_interfaces:
            if i.protocol_binding == binding:
                return i.url.rstrip("/") + PATH
    return ""


def catalog(agents: Iterable[tuple[str, AgentCard, datetime]]) -> bytes:
    """The catalog of (name, public card, served since) for each agent."""
    entries = []
    for name, card, since in agents:
        url = card_url(card)
        host = urlsplit(url).hostname or "localhost"
        entries.append({"identifier": f"urn:air:{host}:a2a:{name}", "type": CARD_TYPE,
                        "url": url, "updatedAt": since.strftime("%Y-%m-%dT%H:%M:%SZ")})
    return json.dumps({"specVersion": "1.0", "entries": entries}, indent=1).encode()
