"""Checking an agent card's signature (spec §8.4) against a JWKS.

The keys come from `jwks_url` when given (a key set you trust), else from the
signature's own `jku`, which is only believed when it is on the same origin
(scheme, host, port) as the card: a card could otherwise point at any key
set, its forger's included.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import aiohttp

from a2a_grpc.cards.signing import CardSignatureError, verify
from a2a_grpc.core.extras import missing
from a2a_grpc.generated import a2a_pb2 as pb

try:
    import jwt
except ImportError as exc:
    raise missing(exc, "checking a card's signature (card --verify)", "auth") from None


async def verify_card(card: pb.AgentCard, card_url: str, session: aiohttp.ClientSession,
                      jwks_url: str | None = None) -> str:
    """The key id that signed `card`; CardSignatureError says why not."""
    sets: dict[str, jwt.PyJWKSet] = {}
    for sig in card.signatures:  # fetch what the signatures point at, before verifying
        header = jwt.get_unverified_header(f"{sig.protected}.e30.")
        url = jwks_url or header.get("jku")
        if not url:
            raise CardSignatureError("the signature names no key set (jku): pass --jwks URL")
        if jwks_url is None and _origin(url) != _origin(card_url):
            raise CardSignatureError(f"the card's key set {url} is on another origin than the "
                                     "card: pass --jwks with a key set you trust")
        if url not in sets:
            async with session.get(url, timeout=aiohttp.ClientTimeout(total=15)) as resp:
                if resp.status != 200:
                    raise CardSignatureError(f"the key set {url} answered HTTP {resp.status}")
                sets[url] = jwt.PyJWKSet.from_dict(await resp.json(content_type=None))

    def key_for(kid: str | None, jku: str | None) -> Any:
        keys = sets[jwks_url or jku or ""]
        for key in keys.keys:
            if key.key_id == kid:
                return key.key
        raise CardSignatureError(f"no key {kid!r} in the key set")

    return verify(card, key_for)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc
