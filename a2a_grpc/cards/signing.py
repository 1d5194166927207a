"""Signed agent cards (spec §8.4): JWS (RFC 7515) over the RFC 8785 canonical
JSON of the card without its `signatures`.

What is signed is the card as the official SDK's verifier rebuilds it: its
ProtoJSON, empty strings, lists and objects removed, then canonicalized. The
spec asks to keep REQUIRED fields even when empty; the SDK drops them, and a
signature only the spec's reading accepts would be refused by every SDK
client, so we sign what the SDK checks (for a card with no empty required
field, the two readings are the same bytes). Fields only the 0.3 card has
(`url`, `preferredTransport`...) are not in the proto, so not signed.

The protected header carries `alg`, `typ: JOSE`, `kid` and `jku` (the
server's JWKS URL, /.well-known/jwks.json).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from google.protobuf import json_format

from a2a_grpc.cards.errors import CardSignatureError
from a2a_grpc.core.extras import missing
from a2a_grpc.generated.a2a_pb2 import AgentCard
from a2a_grpc.push.signing import SigningKey

try:
    import jwt
    from jwt.utils import base64url_decode, base64url_encode
except ImportError as exc:
    raise missing(exc, "signed agent cards", "auth") from None

__all__ = ["CardSignatureError", "canonical", "sign", "verify"]

MAX_DEPTH = 64


def canonical(card: AgentCard) -> bytes:
    data = json_format.MessageToDict(card)
    data.pop("signatures", None)
    return jcs(_clean(data) or {}).encode()


def sign(card: AgentCard, key: SigningKey, jku: str | None = None) -> AgentCard:
    """A copy of `card` with one signature by `key` (any earlier ones dropped)."""
    signed = AgentCard()
    signed.CopyFrom(card)
    del signed.signatures[:]
    headers = {"kid": key.kid, "typ": "JOSE", **({"jku": jku} if jku else {})}
    token = jwt.api_jws.encode(canonical(signed), key.private, algorithm=key.alg,
                               headers=headers)
    protected, _, signature = token.split(".")
    signed.signatures.add(protected=protected, signature=signature)
    return signed


def verify(card: AgentCard, key_for: Callable[[str | None, str | None], Any],
           algorithms: tuple[str, ...] = ("ES256", "RS256", "PS256", "EdDSA")) -> str:
    """The key id of the first signature that verifies; `key_for(kid, jku)`
    gives the public key. CardSignatureError when none does."""
    if not card.signatures:
        raise CardSignatureError("the agent card is not signed")
    payload = base64url_encode(canonical(card)).decode()
    errors = []
    for sig in card.signatures:
        try:
            header = json.loads(base64url_decode(sig.protected.encode()))
            kid, jku = header.get("kid"), header.get("jku")
            jwt.api_jws.decode_complete(f"{sig.protected}.{payload}.{sig.signature}",
                                        key_for(kid, jku), algorithms=list(algorithms))
            return str(kid)
        except Exception as exc:  # a bad header, an unknown key, a bad signature
            errors.append(f"{type(exc).__name__}: {exc}")
    raise CardSignatureError("no signature on the agent card verifies: " + "; ".join(errors))


def _clean(value: Any, depth: int = 1) -> Any:
    """Without empty strings, lists and objects (at any depth), as the SDK does."""
    if depth > MAX_DEPTH:
        raise CardSignatureError(f"the card nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        kept = {k: c for k, v in value.items() if (c := _clean(v, depth + 1)) is not None}
        return kept or None
    if isinstance(value, list):
        items = [c for v in value if (c := _clean(v, depth + 1)) is not None]
        return items or None
    if isinstance(value, str) and not value:
        return None
    return value


def jcs(value: Any) -> str:
    """RFC 8785: keys sorted by UTF-16 code units, no whitespace, numbers as
    ECMAScript prints them, strings with JSON's minimal escaping."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be"))
        return "{" + ",".join(f"{_string(k)}:{jcs(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(jcs(v) for v in value) + "]"
    if isinstance(value, str):
        return _string(value)
    if value is True or value is False or value is None:
        return json.dumps(value)
    return _number(value)


def _string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _number(n: int | float) -> str:
    if isinstance(n, int):
        return str(n)
    if not math.isfinite(n):
        raise CardSignatureError("NaN and infinities have no canonical JSON form")
    if n == 0:
        return "0"
    text = repr(n)  # the shortest digits that round-trip, as ECMAScript picks them
    mantissa, sep, exponent = text.partition("e")
    if sep and not -7 < int(exponent) < 21:
        return f"{mantissa}e{'+' if int(exponent) > 0 else '-'}{abs(int(exponent))}"
    if sep:  # ECMAScript writes these out in full
        text = format(Decimal(text), "f")
    return text.removesuffix(".0")
